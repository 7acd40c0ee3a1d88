/*! zombie-odds widget: <div data-zombie-odds></div><script src="https://HOST/embed/widget.js" async></script>
 * Renders the exact odds calculator into every [data-zombie-odds] element, inside a shadow root (the
 * page's CSS does not reach it, nor its CSS the page). It asks the API that served this script (this
 * script's URL without embed/widget.js), or the one named by the element's data-api. Options on the
 * element: data-mode (the initial mode), data-objective (e.g. reach:3). No framework, no other file. */
(() => {
  "use strict";
  const me = document.currentScript || document.querySelector('script[src*="embed/widget.js"]');
  const home = new URL("..", me ? me.src : location.href);
  const PILES = [["footprints", "Footprints in hand"], ["brains", "Brains set aside"], ["shotguns", "Shotguns set aside"]];
  const EFFECTS = { helmet: "Helmet in force (one more shotgun to bust)",
    "energy-drink": "Energy drink in force (green footprints count as brains)" };
  const ACTIONS = { roll: "Roll", stop: "Stop", board: "Board the bus", stay: "Stay on the bus",
    "get-off": "Get off the bus", tie: "Either: the best choices are worth the same" };
  const RETRY = 10; // seconds before asking again after a failure that says nothing of when
  const CSS = `:host{display:block;max-width:40rem;font:1rem/1.4 system-ui,sans-serif}
[hidden]{display:none!important}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-start}
form>label:first-child{flex-basis:100%}
fieldset{margin:0;padding:.2rem .6rem .5rem;border:1px solid #8888;border-radius:.4rem}
fieldset.wide{flex-basis:100%;display:flex;flex-wrap:wrap;gap:.2rem 1rem;align-items:center}
fieldset.wide legend{float:left;width:100%;padding:0}
legend{font-weight:600;font-size:.9em}
fieldset label{display:flex;justify-content:space-between;gap:.5rem;margin-top:.2rem}
fieldset.wide label{justify-content:flex-start;gap:.3rem}
input,select,button{font:inherit}
input[type=number]{width:3.2em}
input.scores{width:7em}
.dot{margin-right:.2em;text-shadow:0 0 1px #000}
.advice{font-size:1.5em;font-weight:700}
p{margin:.2rem 0}
.err{color:#b00020;font-weight:600;margin:.5rem 0}
.busy{opacity:.35;transition:opacity .2s}
.pending{margin:.5rem 0;font-style:italic;display:flex;align-items:center;gap:.5em}
.spin{width:1em;height:1em;border:.2em solid #8886;border-top-color:currentColor;border-radius:50%;animation:s .8s linear infinite}
@keyframes s{to{transform:rotate(1turn)}}
@media (prefers-reduced-motion:reduce){.spin{animation-duration:3s}}
.note{font-size:.9em;opacity:.8}
table{border-collapse:collapse;margin:.4rem 0}
caption{text-align:left;font-weight:600;white-space:nowrap}
th,td{padding:0 .6em 0 0;text-align:left;font-weight:400}
tr.best th{font-weight:700}
.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;height:.7em;background:currentColor;opacity:.55}
summary{cursor:pointer}`;
  const modeLists = new Map(); // API root -> promise of its modes, asked once per page

  const el = (tag, props = {}, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) /^(aria-|role$|data-)/.test(k) ? e.setAttribute(k, v) : (e[k] = v);
    e.append(...kids);
    return e;
  };
  const pct = (v) => (v > 0 && v < 0.0005 ? "< 0.1 %" : (v * 100).toFixed(1) + " %");
  const num = (v) => String(+v.toFixed(2));
  const title = (s) => s[0].toUpperCase() + s.slice(1);
  const count = (name, what, max) => el("input", { type: "number", name, min: 0, max, value: 0, inputMode: "numeric",
    "data-what": what });
  const labelled = (text, control) => el("label", {}, el("span", {}, text), control);

  async function call(root, path, query) {
    let response;
    try {
      response = await fetch(new URL(path + (query ? "?" + query : ""), root));
    } catch (e) {
      throw { detail: `The odds service cannot be reached (${e.message}).`, retry: RETRY };
    }
    const body = await response.json().catch(() => ({}));
    if (response.ok) return body;
    // An RFC 9457 problem: its detail names every field at fault. A 503 (a stored solution or table still being
    // built), a 429 or a server error is passing: ask again after Retry-After (exposed to other origins).
    const problem = { detail: `The odds service answered ${response.status} ${response.statusText}.`, ...body };
    if (response.status >= 500 || response.status === 429) {
      const after = +response.headers.get("Retry-After") || +((problem.detail.match(/again in (\d+) s/) || [])[1]);
      problem.retry = Math.min(Math.max(after || RETRY, 1), 600);
    }
    throw problem;
  }

  function mount(host) {
    if (host.shadowRoot) return;
    const shadow = host.attachShadow({ mode: "open" });
    if (shadow.adoptedStyleSheets) { // a constructed sheet, not an inline <style>: strict CSPs allow it
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      shadow.adoptedStyleSheets = [sheet];
    } else shadow.append(el("style", { textContent: CSS }));
    const root = host.dataset.api ? new URL(host.dataset.api, location.href) : home;
    const mode = el("select", { name: "mode" });
    const piles = PILES.map(([name, text]) => el("fieldset", { name }, el("legend", { textContent: text })));
    const santa = el("fieldset", { name: "santa", className: "wide" }, el("legend", { textContent: "Santa" }));
    const banked = count("banked", "Brains banked", 1000);
    // The School Bus: on or off; when on, where the player is with it and the tokens taken from it.
    const bus = el("input", { type: "checkbox", name: "school_bus" });
    const where = [["", "Not boarded yet"], ["riding", "Riding the bus"], ["bus_out", "Bus out for this turn"]]
      .map(([value, text], i) => el("label", {}, el("input", { type: "radio", name: "bus", value, checked: !i }), text));
    const busBrains = count("bus_brains", "Brain tokens", 1000), busShotguns = count("bus_shotguns", "Shotgun tokens", 1000);
    const busMore = el("fieldset", { name: "bus-where", className: "wide", hidden: true },
      el("legend", { textContent: "The bus this turn" }), ...where,
      labelled("Brain tokens taken", busBrains), labelled("Shotgun tokens taken", busShotguns));
    const busSet = el("fieldset", { name: "school-bus", className: "wide" }, el("legend", { textContent: "School Bus" }),
      el("label", {}, bus, "Play with the School Bus"), busMore);
    // What to play for: brains on average, a target this turn, or winning the game from its scores and seat.
    const aim = el("select", { name: "aim" }, el("option", { value: "expected-brains", textContent: "The most brains on average" }),
      el("option", { value: "reach", textContent: "A target this turn" }), el("option", { value: "win", textContent: "Winning the game" }));
    const target = count("target", "Target", 40);
    target.min = 1;
    target.value = 13;
    const mine = count("score", "Your score", 100);
    const others = el("input", { type: "text", name: "others", className: "scores", inputMode: "numeric",
      "data-what": "Other players' scores", placeholder: "e.g. 9 or 9,4" });
    const seat = count("seat", "Your seat", 8);
    seat.min = 1;
    seat.value = 1;
    const reachSet = labelled("Brains to reach this turn", target);
    const winSet = el("span", { hidden: true }, labelled("Your score before this turn", mine),
      labelled("Other players' scores (comma-separated)", others), labelled("Your seat (1: first in each round)", seat));
    reachSet.hidden = true;
    const aimSet = el("fieldset", { name: "objective", className: "wide" }, el("legend", { textContent: "Play for" }),
      labelled("Aim", aim), reachSet, winSet);
    const fresh = el("button", { type: "button", textContent: "New turn" });
    const form = el("form", {}, el("label", {}, "Game ", mode), ...piles, santa,
      el("label", {}, "Brains banked when the cup ran out ", banked), busSet, aimSet, fresh);
    const pending = el("p", { className: "pending", role: "status", hidden: true },
      el("span", { className: "spin", "aria-hidden": "true" }), "Working out the odds\u2026");
    const error = el("p", { className: "err", role: "alert", hidden: true });
    const live = el("div", { "aria-live": "polite", className: "result" });
    const details = el("div", { className: "details" });
    shadow.append(form, pending, error, live, details);
    let modes, current, seq = 0, timer, again;

    const objective = host.dataset.objective || "";
    if (/^reach:\d+$/.test(objective)) { aim.value = "reach"; target.value = objective.slice(6); }
    const shown = (e) => !e.closest("[hidden]");
    const controls = () => [...form.querySelectorAll("input")].filter(shown);
    form.addEventListener("input", () => { busy(); clearTimeout(timer); timer = setTimeout(update, 150); });
    form.addEventListener("submit", (e) => { e.preventDefault(); update(); });
    form.addEventListener("change", (e) => {
      if (e.target === mode) build();
      busMore.hidden = !bus.checked;
      reachSet.hidden = aim.value !== "reach";
      winSet.hidden = aim.value !== "win";
    });
    fresh.addEventListener("click", () => {
      for (const i of [...piles, santa, busMore].flatMap((f) => [...f.querySelectorAll("input")])) {
        if (i.type === "number") i.value = 0; else i.checked = i.type === "radio" && !i.value;
      }
      banked.value = 0;
      busy();
      update();
    });

    function build() { // one count per die and face kind of the mode in each pile; Santa's effects if it has them
      current = modes.find((m) => m.name === mode.value);
      const faces = (d, test) => d.faces.some(test);
      for (const f of piles) {
        const inputs = [];
        for (const d of current.dice) {
          const kinds = { footprints: [["", (x) => x.footprints]], brains: [["", (x) => x.brains === 1],
            ["double_", (x) => x.brains === 2]], shotguns: [["", (x) => x.shotguns === 1], ["double_", (x) => x.shotguns === 2]] };
          for (const [double, test] of kinds[f.name]) {
            if (!faces(d, test)) continue;
            const dot = el("span", { className: "dot", textContent: "\u25cf", "aria-hidden": "true" });
            dot.style.color = d.colour.split(" ")[0];
            const text = d.name + (double ? " (double)" : "");
            inputs.push(el("label", {}, el("span", {}, dot, text),
              count(`${double}${f.name}.${d.name}`, `${f.firstChild.textContent}, ${text}`, d.count)));
          }
        }
        f.replaceChildren(f.firstChild, ...inputs);
      }
      const out = current.dice.filter((d) => d.stays_out);
      santa.replaceChildren(santa.firstChild, ...current.effects.map((e) => el("label", {},
        el("input", { type: "checkbox", name: `effects.${e.name}` }), EFFECTS[e.name] || e.name)),
      ...out.map((d) => el("label", {}, el("input", { type: "checkbox", name: `kept_out.${d.name}` }),
        `${title(d.name)} kept out of the cup (his brains noted in the banked brains)`)));
      santa.hidden = santa.children.length === 1;
    }

    function query() { // the position as /v1/odds query parameters from the fields shown; a bad field is thrown
      const q = new URLSearchParams({ mode: mode.value });
      const lists = {};
      for (const i of controls()) {
        i.removeAttribute("aria-invalid");
        if (i.type === "number" && (i.validity.badInput || !/^\d{1,4}$/.test(i.value.trim()))) throw i;
        if (i.name === "others" && !/^\s*\d{1,3}(\s*,\s*\d{1,3}){0,6}\s*$/.test(i.value)) throw i;
        const [field, die] = i.name.split(".");
        if (!die) continue;
        const list = (lists[field] ||= []);
        for (let k = i.type === "checkbox" ? +i.checked : +i.value; k > 0; k--) list.push(die);
      }
      for (const field of ["double_brains", "double_shotguns"]) { // each double is a die of its pile, too
        const pile = field.slice(7);
        if (lists[field]) lists[pile] = [...(lists[pile] || []), ...lists[field]];
      }
      for (const field of ["footprints", "brains", "shotguns", "double_brains", "double_shotguns", "effects", "kept_out"]) {
        if (lists[field] && lists[field].length) q.set(field, lists[field].join(","));
      }
      if (+banked.value) q.set("banked", +banked.value);
      if (bus.checked) {
        q.set("school_bus", "true");
        const at = where.find((l) => l.firstChild.checked).firstChild.value;
        if (at) q.set(at, "true");
        if (+busBrains.value) q.set("bus_brains", +busBrains.value);
        if (+busShotguns.value) q.set("bus_shotguns", +busShotguns.value);
      }
      if (aim.value === "reach") q.set("objective", `reach:${+target.value}`);
      else if (aim.value === "win") {
        q.set("scores", [+mine.value, ...others.value.split(",").map((s) => +s)].join(","));
        q.set("seat", +seat.value);
      } else if (objective && !/^reach:/.test(objective)) q.set("objective", objective);
      return q;
    }

    function busy() { // at once, before the answer: the old one greyed, a spinner, aria-busy
      clearTimeout(again);
      live.setAttribute("aria-busy", "true");
      live.classList.add("busy");
      details.classList.add("busy");
      pending.hidden = false;
    }

    function idle() {
      live.removeAttribute("aria-busy");
      live.classList.remove("busy");
      details.classList.remove("busy");
      pending.hidden = true;
    }

    async function update() {
      const n = ++seq;
      busy();
      try {
        const odds = await call(root, "v1/odds", query());
        if (n === seq) { idle(); show(odds); }
      } catch (e) {
        if (n !== seq) return;
        idle();
        if (e instanceof HTMLInputElement) {
          e.setAttribute("aria-invalid", "true");
          fail({ detail: `${e.dataset.what}: ` + (e.name === "others"
            ? "enter each other player's score, separated by commas" : "enter a whole number (0 or more)") });
        } else fail(e);
        if (e.retry) { // passing: say when, stay busy, and ask again then
          live.setAttribute("aria-busy", "true");
          again = setTimeout(() => n === seq && update(), e.retry * 1000);
        }
      }
    }

    function fail(problem) {
      error.textContent = problem.detail || `The odds service cannot be reached (${problem.message || problem}).`;
      if (problem.retry) {
        error.textContent = (problem.status === 503 ? "Not ready yet: " : "") + error.textContent.replace(/\.?$/, ".")
          + ` Trying again in ${problem.retry} s.`;
      }
      for (const e of problem.errors || []) {
        const field = e.field.split(/[.[]/)[0];
        for (const i of controls()) {
          const [name] = i.name.split(".");
          if (name === field || (field === "scores" && ["score", "others"].includes(name)) || name === `double_${field}`) {
            i.setAttribute("aria-invalid", "true");
          }
        }
      }
      error.hidden = false;
      live.hidden = details.hidden = true;
    }

    function show(odds) {
      const p = odds.position, roll = odds.next_roll, d = odds.decision, game = odds.game;
      const actions = d.actions || [];
      const start = p.first_roll || (actions.length ? actions.length === 1 && actions[0].action === "roll"
        : !p.footprints.length && !p.brains.length && !p.shotguns.length && !p.banked);
      const reach = d.objective.startsWith("reach:") && d.objective.slice(6);
      const chance = reach || d.objective === "win";
      const value = (v) => (chance ? pct(v.value) : num(v.value));
      const what = game ? "Chance to win the game: " : reach ? `Chance to end the turn with ${reach}+ brains: `
        : "Expected brains this turn: ";
      const b = (className, v) => el("b", { className, textContent: value(v) });
      const advice = ACTIONS[d.action] || d.action;
      live.replaceChildren(
        el("p", { className: "advice", textContent: start ? "Roll (the first roll is compulsory)" : advice }),
        start ? el("p", {}, what, b("roll", d.roll), ".")
          : el("p", {}, what, b("roll", d.roll), " if you roll on" + (actions.length > 2 ? " (the best way: every choice below), " : ", "), b("stop", d.stop), " if you stop now."),
        el("p", {}, "Bust chance of the next roll: ", el("b", { className: "bust", textContent: pct(roll.bust.value) }),
          ` (${roll.bust.exact})`, roll.recycles ? "; the brains are noted and go back in the cup first." : "."),
        game ? el("p", { className: "note" }, `Scores ${game.scores.join(" to ")}, seat ${game.seat}: `
          + `${pct(game.win_probability.value)} to win from the start of this turn.`) : "");
      const helmet = (p.effects || []).reduce((s, e) => s + ((current.effects.find((x) => x.name === e) || {}).bust_bonus || 0), 0);
      const shotguns = p.shotguns.length + (p.double_shotguns || []).length + (p.bus_shotguns || 0);
      const next = new Map([["Bust", roll.bust.value]]);
      for (const o of roll.outcomes) {
        const label = `${o.brains < 0 ? "\u2212" + -o.brains : "+" + o.brains} brain${Math.abs(o.brains) === 1 ? "" : "s"}`;
        if (shotguns + o.shotguns < current.bust_at + helmet) next.set(label, (next.get(label) || 0) + o.value);
      }
      const scores = [];
      let total = 0;
      for (const s of (odds.turn || {}).score_distribution || []) {
        if (total > 0.999) { scores.push([`${s.score} or more`, 1 - total]); break; }
        scores.push([String(s.score), s.value]);
        total += s.value;
      }
      const choices = actions.length > 1 ? el("table", { className: "actions" },
        el("caption", { textContent: "Every choice" }),
        el("tr", {}, el("th", { scope: "col", textContent: "Choice" }), el("th", { scope: "col", className: "n",
          textContent: game ? "Win" : reach ? "Reach" : "Brains" }), el("th", { scope: "col", className: "n", textContent: "Bust" })),
        ...actions.map((a) => el("tr", { className: a.action === d.action ? "best" : "", "data-action": a.action },
          el("th", { scope: "row", textContent: ACTIONS[a.action] || a.action }),
          el("td", { className: "n", textContent: value(a.value) }),
          el("td", { className: "n", textContent: a.next_roll ? pct(a.next_roll.bust.value) : "" })))) : "";
      details.replaceChildren(choices, table("Next roll", next), scores.length ? el("details", {},
        el("summary", { textContent: "Final score of the turn" }),
        table("Final score if you roll now, then play best", scores)) : "",
      odds.turn_left_out ? el("p", { className: "note", textContent: "No score distribution here: " + odds.turn_left_out }) : "");
      error.hidden = true;
      live.hidden = details.hidden = false;
    }

    function table(caption, rows) {
      return el("table", { className: "odds" }, el("caption", { textContent: caption }), ...[...rows].map(([label, v]) => {
        const bar = el("span", { className: "bar", "aria-hidden": "true" });
        bar.style.width = `${(v * 10).toFixed(2)}em`;
        return el("tr", {}, el("th", { scope: "row", textContent: label }),
          el("td", { className: "n", textContent: pct(v) }), el("td", {}, bar));
      }));
    }

    busy();
    if (!modeLists.has(root.href)) modeLists.set(root.href, call(root, "v1/modes").then((b) => b.modes));
    modeLists.get(root.href).then((list) => {
      modes = list;
      mode.append(...list.map((m) => el("option", { value: m.name, textContent: m.title })));
      if (list.some((m) => m.name === host.dataset.mode)) mode.value = host.dataset.mode;
      form.dispatchEvent(new Event("change"));
      build();
      update();
    }, (e) => { idle(); fail(e); });
  }

  const mountAll = () => document.querySelectorAll("[data-zombie-odds]").forEach(mount);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
