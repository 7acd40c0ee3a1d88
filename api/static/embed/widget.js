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
  const CSS = `:host{display:block;max-width:38rem;font:1rem/1.4 system-ui,sans-serif}
[hidden]{display:none!important}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
form>label:first-child{flex-basis:100%}
fieldset{margin:0;padding:.2rem .6rem .5rem;border:1px solid #8888;border-radius:.4rem}
legend{font-weight:600;font-size:.9em}
fieldset label{display:flex;justify-content:space-between;gap:.5rem;margin-top:.2rem}
input,select,button{font:inherit}
input{width:3.2em}
.dot{margin-right:.2em;text-shadow:0 0 1px #000}
.advice{font-size:1.5em;font-weight:700}
p{margin:.2rem 0}
.err{color:#b00020;font-weight:600;margin:.5rem 0}
table{border-collapse:collapse;margin:.4rem 0}
caption{text-align:left;font-weight:600;white-space:nowrap}
th,td{padding:0 .6em 0 0;text-align:left;font-weight:400}
.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;height:.7em;background:currentColor;opacity:.55}
summary{cursor:pointer}`;
  const modeLists = new Map(); // API root -> promise of its modes, asked once per page

  const el = (tag, props = {}, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) /^(aria-|role$)/.test(k) ? e.setAttribute(k, v) : (e[k] = v);
    e.append(...kids);
    return e;
  };
  const pct = (v) => (v > 0 && v < 0.0005 ? "< 0.1 %" : (v * 100).toFixed(1) + " %");
  const num = (v) => String(+v.toFixed(2));

  async function call(root, path, query) {
    const response = await fetch(new URL(path + (query ? "?" + query : ""), root));
    const body = await response.json();
    if (!response.ok) throw body; // an RFC 9457 problem: its detail names every field at fault
    return body;
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
    const objective = host.dataset.objective;
    const mode = el("select", { name: "mode" });
    const piles = PILES.map(([name, title]) => el("fieldset", { name }, el("legend", { textContent: title })));
    const banked = el("input", { type: "number", name: "banked", min: 0, value: 0, inputMode: "numeric" });
    const fresh = el("button", { type: "button", textContent: "New turn" });
    const form = el("form", {}, el("label", {}, "Game ", mode), ...piles,
      el("label", {}, "Brains banked when the cup ran out ", banked), fresh);
    const error = el("p", { className: "err", role: "alert", hidden: true });
    const live = el("div", { "aria-live": "polite" });
    const details = el("div");
    shadow.append(form, error, live, details);
    let modes, bustAt, seq = 0, timer;

    const inputs = () => form.querySelectorAll("input");
    form.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(update, 120); });
    form.addEventListener("submit", (e) => { e.preventDefault(); update(); });
    mode.addEventListener("change", () => { build(); update(); });
    fresh.addEventListener("click", () => { for (const i of inputs()) i.value = 0; update(); });

    function build() { // one number input per die of the mode in each pile
      const m = modes.find((m) => m.name === mode.value);
      bustAt = m.bust_at;
      for (const f of piles) {
        f.replaceChildren(f.firstChild, ...m.dice.map((d) => {
          const dot = el("span", { className: "dot", textContent: "\u25cf", "aria-hidden": "true" });
          dot.style.color = d.colour;
          return el("label", {}, el("span", {}, dot, d.name), el("input", {
            type: "number", name: `${f.name}.${d.name}`, min: 0, max: d.count, value: 0, inputMode: "numeric" }));
        }));
      }
    }

    function query() { // the position as /v1/odds query parameters; an input that is not a count throws it
      const q = new URLSearchParams({ mode: mode.value });
      if (objective) q.set("objective", objective);
      for (const i of inputs()) {
        i.removeAttribute("aria-invalid");
        if (i.validity.badInput || !/^\d{0,4}$/.test(i.value.trim())) throw i;
      }
      for (const f of piles) {
        const names = [];
        for (const i of f.querySelectorAll("input")) for (let k = +i.value; k > 0; k--) names.push(i.name.split(".")[1]);
        if (names.length) q.set(f.name, names.join(","));
      }
      if (+banked.value) q.set("banked", +banked.value);
      return q;
    }

    async function update() {
      const n = ++seq;
      live.setAttribute("aria-busy", "true");
      try {
        const odds = await call(root, "v1/odds", query());
        if (n === seq) show(odds);
      } catch (e) {
        if (n !== seq) return;
        if (e instanceof HTMLInputElement) {
          e.setAttribute("aria-invalid", "true");
          const where = e.closest("fieldset");
          fail({ detail: `${where ? where.firstChild.textContent + ", " + e.name.split(".")[1] : "Brains banked"}: `
            + "enter a whole number (0 or more)" });
        } else fail(e);
      } finally {
        live.removeAttribute("aria-busy");
      }
    }

    function fail(problem) {
      error.textContent = problem.detail || `The odds service cannot be reached (${problem.message || problem}).`;
      for (const e of problem.errors || []) {
        const f = piles.find((p) => p.name === e.field.split(/[.[]/)[0]);
        for (const i of f ? f.querySelectorAll("input") : e.field === "banked" ? [banked] : []) {
          i.setAttribute("aria-invalid", "true");
        }
      }
      error.hidden = false;
      live.hidden = details.hidden = true;
    }

    function show(odds) {
      const p = odds.position, roll = odds.next_roll, d = odds.decision;
      const start = !p.footprints.length && !p.brains.length && !p.shotguns.length && !p.banked;
      const reach = d.objective.startsWith("reach:") && d.objective.slice(6);
      const value = (v) => (reach ? pct(v.value) : num(v.value));
      const what = reach ? `Chance to end the turn with ${reach}+ brains: ` : "Expected brains this turn: ";
      const advice = { roll: "Roll", stop: "Stop", tie: "Either: rolling and stopping are worth the same" }[d.action];
      live.replaceChildren(
        el("p", { className: "advice", textContent: start ? "Roll (the first roll is compulsory)" : advice }),
        start ? el("p", {}, what, el("b", { className: "roll", textContent: value(d.roll) }), ".")
          : el("p", {}, what, el("b", { className: "roll", textContent: value(d.roll) }), " if you roll on, ",
            el("b", { className: "stop", textContent: value(d.stop) }), " if you stop now."),
        el("p", {}, "Bust chance of the next roll: ", el("b", { className: "bust", textContent: pct(roll.bust.value) }),
          ` (${roll.bust.exact})`, roll.recycles ? "; the brains are noted and go back in the cup first." : "."));
      const shotguns = p.shotguns.length + (p.double_shotguns || []).length;
      const next = new Map([["Bust", roll.bust.value]]);
      for (const o of roll.outcomes) {
        const label = `+${o.brains} brain${o.brains === 1 ? "" : "s"}`;
        if (shotguns + o.shotguns < bustAt) next.set(label, (next.get(label) || 0) + o.value);
      }
      const scores = [];
      let total = 0;
      for (const s of (odds.turn || {}).score_distribution || []) {
        if (total > 0.999) { scores.push([`${s.score} or more`, 1 - total]); break; }
        scores.push([String(s.score), s.value]);
        total += s.value;
      }
      details.replaceChildren(table("Next roll", next), scores.length ? el("details", {},
        el("summary", { textContent: "Final score of the turn" }),
        table("Final score if you roll now, then play best", scores)) : "");
      error.hidden = true;
      live.hidden = details.hidden = false;
    }

    function table(caption, rows) {
      return el("table", {}, el("caption", { textContent: caption }), ...[...rows].map(([label, v]) => {
        const bar = el("span", { className: "bar", "aria-hidden": "true" });
        bar.style.width = `${(v * 10).toFixed(2)}em`;
        return el("tr", {}, el("th", { scope: "row", textContent: label }),
          el("td", { className: "n", textContent: pct(v) }), el("td", {}, bar));
      }));
    }

    if (!modeLists.has(root.href)) modeLists.set(root.href, call(root, "v1/modes").then((b) => b.modes));
    modeLists.get(root.href).then((list) => {
      modes = list;
      mode.append(...list.map((m) => el("option", { value: m.name, textContent: m.title })));
      if (list.some((m) => m.name === host.dataset.mode)) mode.value = host.dataset.mode;
      build();
      update();
    }, fail);
  }

  const mountAll = () => document.querySelectorAll("[data-zombie-odds]").forEach(mount);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
