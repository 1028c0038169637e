// envgym view: renders the embedded run data. One episode is rendered at a time, and the
// episode list is built in pages, so a file with thousands of episodes opens at once.
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const EPS = DATA.episodes;
const PAGE = 300;
let shown = PAGE;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined)
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return e;
}
const fmt = (x, d = 3) => (x === null || x === undefined) ? "–" : (typeof x === "number" ? x.toFixed(d) : String(x));

// Diverging scale: blue (negative) – white (0) – orange (positive), saturating at DATA.scale.
function colour(a) {
  const t = Math.max(-1, Math.min(1, a / DATA.scale));
  const [r, g, b] = t < 0 ? [33, 102, 172] : [214, 96, 21];
  const w = Math.abs(t);
  const mix = (c) => Math.round(255 + (c - 255) * w);
  return `rgb(${mix(r)},${mix(g)},${mix(b)})`;
}
// Text on a coloured token: black or white, whichever contrasts more with the cell (WCAG
// relative luminance; the switch at 0.179 keeps every cell at contrast >= 4.5, so neither the
// saturated blue end nor the orange end nor the pale middle is hard to read).
function textOn(a) {
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const [r, g, b] = colour(a).slice(4, -1).split(",").map(Number);
  const lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return lum > 0.179 ? "#000000" : "#ffffff";
}

function renderSummary() {
  const s = DATA.summary, rows = [
    ["environment", s.envs.join(", ") || "–"], ["policy", s.policies.join(", ") || "–"],
    ["episodes", s.episodes], ["completed", s.completed], ["failed", s.failed],
    ["mean reward", fmt(s.mean_reward)], ["success", fmt(s.success_rate)],
    ["samples/task", s.samples_per_task], ["credit", DATA.credit_source]];
  for (const k of Object.keys(s)) if (k.startsWith("pass@")) rows.push([k, fmt(s[k])]);
  if (s.unreadable_records) rows.push(["unreadable records", s.unreadable_records]);
  const t = el("table", {id: "summary-table"});
  for (const [k, v] of rows) t.append(el("tr", {"data-key": k}, el("td", {text: k}), el("td", {text: String(v)})));
  const box = document.getElementById("summary");
  box.append(t);
  const reasons = Object.entries(s.failure_reasons || {});
  if (reasons.length) {
    const b = el("div", {class: "errbox", id: "failure-reasons"}, "failed episodes by reason:");
    for (const [r, n] of reasons) b.append(el("div", {}, `${n} × ${r}`));
    box.append(b);
  }
  const steps = [...new Set(EPS.map(e => e.meta.train_step).filter(x => x !== undefined))].sort((a, b) => a - b);
  const sel = document.getElementById("f-step");
  for (const st of steps) sel.append(el("option", {value: String(st), text: String(st)}));
  if (!steps.length) sel.parentElement.hidden = true;
}

function renderLegend() {
  document.getElementById("legend").append(
    "advantage", el("span", {text: fmt(-DATA.scale, 2)}), el("span", {class: "bar"}),
    el("span", {text: "+" + fmt(DATA.scale, 2)}),
    el("span", {class: "hint", text: " · grey = observation (not trained) · outline = reward span"}));
  if (DATA.unreadable.length) {
    const b = el("div", {class: "warnbox", id: "unreadable-box"},
      `${DATA.unreadable.length} record(s) could not be read:`);
    for (const u of DATA.unreadable)
      b.append(el("div", {}, `${u.file} line ${u.line}${u.torn ? " (torn last line)" : ""}: ${u.reason}`));
    document.getElementById("unreadable").append(b);
  }
}

function haystack(e) {
  if (e._hay === undefined) {
    const parts = [e.task || "", e.error || ""];
    for (const t of e.turns) { parts.push(t.action); for (const m of t.obs) parts.push(m.content); }
    e._hay = parts.join("\n").toLowerCase();
  }
  return e._hay;
}

function matches(e) {
  const f = document.getElementById("f-success").value;
  if (f === "success" && !(e.success && !e.error)) return false;
  if (f === "fail" && (e.success || e.error)) return false;
  if (f === "failed" && !e.error) return false;
  const lo = parseFloat(document.getElementById("f-min").value);
  const hi = parseFloat(document.getElementById("f-max").value);
  if (!isNaN(lo) && e.reward < lo) return false;
  if (!isNaN(hi) && e.reward > hi) return false;
  const st = document.getElementById("f-step").value;
  if (st !== "all" && String(e.meta.train_step) !== st) return false;
  const q = document.getElementById("f-text").value.trim().toLowerCase();
  return !q || haystack(e).includes(q);
}

function renderGroups() {
  const box = document.getElementById("groups");
  box.replaceChildren();
  let count = 0, rows = 0;
  for (const g of DATA.groups) {
    const members = g.members.filter(i => matches(EPS[i]));
    count += members.length;
    if (!members.length || rows >= shown) continue;
    const div = el("div", {class: "group", "data-group": g.key},
      el("div", {class: "gh"}, g.key, el("span", {class: "badge", text: `${g.members.length}`}),
         g.zero_variance ? el("span", {class: "badge warn", title: "every completed member has the same reward: no learning signal", text: "zero variance"}) : null));
    for (const i of members) {
      const e = EPS[i];
      const tag = e.error ? el("span", {class: "badge bad", text: "failed"})
        : el("span", {class: e.success ? "badge ok" : "badge", text: e.success ? "✓" : "✗"});
      div.append(el("a", {class: "member" + (e.error ? " failed" : ""), href: `#ep=${i}`, "data-ep": i},
        `#${i} `, e.agent ? `${e.agent} ` : "", `r=${fmt(e.reward, 2)}`, tag));
      rows++;
    }
    box.append(div);
  }
  document.getElementById("f-count").textContent = `${count} of ${EPS.length} episodes match`;
  if (rows >= shown && count > rows)
    box.append(el("button", {class: "more", onclick: () => { shown += PAGE; renderGroups(); }}, "show more"));
}

function tokenClasses(turn) {
  // Which tokens fall inside a reward span, and of which kind.
  const kinds = new Array((turn.tokens || []).length).fill(null);
  for (const s of turn.spans)
    if (s.token_start !== null && s.token_end !== null)
      for (let k = s.token_start; k < s.token_end && k < kinds.length; k++) kinds[k] = s.kind;
  return kinds;
}

function renderAction(turn) {
  const box = el("div", {class: "action" + (turn.adv ? "" : " nocredit"), "data-trained": turn.trained ? "1" : "0"});
  if (!turn.tokens) {                       // text-only policy: no tokens to colour
    box.append(spanText(turn.action, turn.spans));
    return box;
  }
  const kinds = tokenClasses(turn);
  turn.tokens.forEach((text, k) => {
    const a = turn.adv ? turn.adv[k] : null, lp = turn.logprobs[k];
    const cls = ["tok"];
    if (kinds[k]) cls.push("inspan", "k-" + kinds[k]);
    if (!turn.trained) cls.push("untrained");
    const t = el("span", {class: cls.join(" "), "data-k": k, "data-adv": a === null ? "" : String(a),
      "data-lp": lp === undefined ? "" : String(lp), "data-trained": turn.trained ? "1" : "0",
      title: `token: ${JSON.stringify(text)}\nlog-prob: ${fmt(lp, 4)}\nadvantage: ${a === null ? "none" : a.toFixed(4)}` +
             (kinds[k] ? `\nspan: ${kinds[k]}` : "")}, text);
    if (a !== null && turn.trained) { t.style.background = colour(a); t.style.color = textOn(a); }
    box.append(t);
  });
  return box;
}

function spanText(text, spans) {
  const frag = document.createDocumentFragment();
  let at = 0;
  for (const s of [...spans].sort((x, y) => x.start - y.start)) {
    if (s.start < at) continue;
    frag.append(text.slice(at, s.start), el("span", {class: "tok inspan k-" + s.kind, title: `${s.kind}: ${fmt(s.value)}`}, text.slice(s.start, s.end)));
    at = s.end;
  }
  frag.append(text.slice(at));
  return frag;
}

function sameState(e, j) {
  // GiGPO's step groups: the other turns of this group taken from the same anchor state
  // (the state before the action; turn 0 of every member starts from the task's own).
  const key = e.turns[j].anchor, out = [];
  if (!key) return out;
  const g = DATA.groups.find(g => g.key === e.group);
  for (const i of (g ? g.members : [])) EPS[i].turns.forEach((t, jj) => {
    if (t.anchor === key && !(i === e.i && jj === j)) out.push([i, jj]);
  });
  return out;
}

function renderTurn(e, turn, j) {
  const head = el("div", {class: "th"}, `turn ${j}`,
    turn.role ? el("span", {class: "badge", text: turn.role}) : null,
    el("span", {class: "badge", text: `reward ${fmt(turn.reward)}`}),
    turn.trained ? null : el("span", {class: "badge", text: "not trained"}),
    turn.parse_error ? el("span", {class: "badge bad", title: turn.parse_error, text: "parse error"}) : null);
  const div = el("div", {class: "turn", id: `turn-${e.i}-${j}`}, head);
  if (turn.anchor) {
    const peers = sameState(e, j);
    const from = turn.anchor === "__start__" ? el("code", {text: "initial"})
      : el("code", {text: turn.anchor.slice(0, 16)});
    const ss = el("div", {class: "samestate"}, "from state ", from,
      peers.length ? ` · same state in ${peers.length} other turn(s): ` : " · unique in its group");
    for (const [i, jj] of peers.slice(0, 20)) ss.append(el("a", {href: `#ep=${i}&turn=${jj}`, text: `#${i}/t${jj}`}));
    div.append(ss);
  }
  for (const m of turn.obs)
    div.append(el("div", {class: "obs untrained", "data-trained": "0", title: "observation: not trained"},
      el("span", {class: "r", text: `${m.role}: `}), m.content));
  div.append(renderAction(turn));
  const comps = Object.entries(turn.components || {});
  if (comps.length) {
    const t = el("table", {class: "comps"});
    t.append(el("tr", {}, ...comps.map(([k]) => el("td", {text: k}))));
    t.append(el("tr", {}, ...comps.map(([, v]) => el("td", {text: fmt(v)}))));
    div.append(t);
  }
  return div;
}

function family(e) {
  // Debate: the other agents of the same episode. SLATE: the siblings of the same tree.
  const m = e.meta;
  if (e.agent) {
    const peers = EPS.filter(x => x.agent && x.env === e.env && x.seed === e.seed && x.task === e.task &&
      String(x.meta.train_step) === String(m.train_step) && String(x.meta.episode ?? x.meta.member) === String(m.episode ?? m.member));
    if (peers.length > 1) return {kind: "agents", peers};
  }
  if (m.tree !== undefined) {
    const peers = EPS.filter(x => x.meta.tree === m.tree && String(x.meta.step) === String(m.step) &&
      String(x.meta.train_step) === String(m.train_step) && x.group === e.group);
    if (peers.length > 1) return {kind: "siblings", peers};
  }
  return null;
}

function renderEpisode(i, focusTurn) {
  const e = EPS[i], box = document.getElementById("episode");
  if (!e) { box.replaceChildren(el("p", {class: "hint", text: `no episode #${i}`})); return; }
  document.querySelectorAll(".member.sel").forEach(x => x.classList.remove("sel"));
  document.querySelectorAll(`.member[data-ep="${i}"]`).forEach(x => x.classList.add("sel"));
  const metaBits = Object.entries(e.meta).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`);
  const parts = [el("h2", {}, `#${i} · ${e.env}`, e.agent ? el("span", {class: "badge", text: e.agent}) : null),
    el("div", {}, `task ${e.task} · seed ${e.seed} · group ${e.group} · policy ${e.policy || "–"}`),
    el("div", {}, `reward ${fmt(e.reward)} · success ${e.success} · credit ${e.credit ? e.credit.join(" → ") : "none"}`),
    metaBits.length ? el("div", {class: "hint", text: metaBits.join(" · ")}) : null];
  if (e.error) parts.push(el("div", {class: "errbox", id: "episode-error"}, "FAILED episode (left out of metrics and credit):\n" + e.error));
  const fam = family(e);
  if (fam) {
    const cols = el("div", {class: "cols", id: "family"});
    for (const p of fam.peers) {
      const col = el("div", {class: "col"}, el("h3", {}, fam.kind === "agents" ? (p.agent || "?") : `sibling ${p.meta.sibling ?? p.i}`,
        ` · r=${fmt(p.reward, 2)}`, p.i === e.i ? el("span", {class: "badge", text: "this"}) : el("a", {href: `#ep=${p.i}`, text: " open"})));
      p.turns.forEach((t, j) => col.append(renderTurn(p, t, j)));
      cols.append(col);
    }
    parts.push(el("p", {class: "hint", text: fam.kind === "agents" ? "agents' turns side by side" : "siblings of this step side by side"}), cols);
  } else {
    e.turns.forEach((t, j) => parts.push(renderTurn(e, t, j)));
  }
  for (const m of e.final) parts.push(el("div", {class: "obs untrained", "data-trained": "0"}, el("span", {class: "r", text: `${m.role}: `}), m.content));
  if (Object.keys(e.outcome || {}).length) parts.push(el("pre", {class: "hint", text: "outcome " + JSON.stringify(e.outcome, null, 1)}));
  box.replaceChildren(...parts.filter(Boolean));
  if (focusTurn !== undefined) { const t = document.getElementById(`turn-${i}-${focusTurn}`); if (t) t.scrollIntoView(); }
}

function route() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.has("ep")) renderEpisode(parseInt(h.get("ep"), 10), h.has("turn") ? parseInt(h.get("turn"), 10) : undefined);
}

// A hover box that appears at once (the title attribute stays for accessibility and tests).
const tip = document.getElementById("tip");
document.addEventListener("mouseover", ev => {
  const t = ev.target.closest(".tok");
  if (!t || !t.title) { tip.hidden = true; return; }
  tip.textContent = t.title; tip.hidden = false;
});
document.addEventListener("mousemove", ev => { tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px"; });

for (const id of ["f-success", "f-min", "f-max", "f-step", "f-text"])
  document.getElementById(id).addEventListener("input", () => { shown = PAGE; renderGroups(); });
window.addEventListener("hashchange", route);
renderSummary(); renderLegend(); renderGroups();
// Without a #ep=, open on the first episode whose credit is not all zero (DATA.start).
if (location.hash) route(); else if (EPS.length) renderEpisode(DATA.start ?? 0);
document.body.setAttribute("data-ready", "1");
