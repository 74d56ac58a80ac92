// The agent-core session viewer. Served by `agent-core ui DB`, or embedded in one file by
// `agent-core inspect DB SESSION --html FILE` (then window.AGENT_CORE_EMBED holds the data and nothing is fetched).
"use strict";
const EMBED = window.AGENT_CORE_EMBED || null;
const FOLLOW_MS = 1000;
let current = { sid: null, view: null, seq: null, tab: "state", length: 0 };
let timer = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path, options) {
  const response = await fetch(path, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function post(path, data) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data) });
}

const main = () => document.getElementById("main");
const fmtTime = (ms) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
const offset = (ms, origin) => "+" + ((ms - origin) / 1000).toFixed(3) + "s";

function show(...nodes) { main().replaceChildren(...nodes); }

function failure(error) { show(el("p", { class: "verify bad", id: "error" }, String(error.message || error))); }

async function route() {
  clearInterval(timer);
  const match = location.hash.match(/^#\/s\/([^/]+)(?:\/r\/(\d+))?/);
  try {
    if (EMBED) { current.sid = EMBED.view.session.session_id; current.view = EMBED.view; current.seq = match && match[2] ? +match[2] : null; return renderSession(); }
    if (!match) return await renderSessions();
    const sid = decodeURIComponent(match[1]);
    current.seq = match[2] ? +match[2] : null;
    if (sid !== current.sid || !current.view) { current.sid = sid; current.view = await api(`/api/sessions/${encodeURIComponent(sid)}`); }
    current.length = current.view.session.length;
    await renderSession();
    follow();
  } catch (error) { failure(error); }
}

async function renderSessions() {
  current = { sid: null, view: null, seq: null, tab: current.tab, length: 0 };
  document.getElementById("where").textContent = "sessions";
  const sessions = await api("/api/sessions");
  const rows = sessions.map((s) => el("tr", { class: "session", "data-session": s.session_id },
    el("td", {}, el("a", { href: `#/s/${encodeURIComponent(s.session_id)}` }, s.session_id)),
    el("td", {}, s.length), el("td", {}, el("span", { class: `badge ${s.phase}` }, s.phase)),
    el("td", {}, s.first_timestamp ? fmtTime(s.first_timestamp) : ""), el("td", {}, s.last_timestamp ? fmtTime(s.last_timestamp) : ""),
    el("td", {}, s.parent ? `${s.parent.session_id} at ${s.parent.seq}` : "")));
  show(el("h1", {}, "Sessions"), sessions.length
    ? el("table", { id: "sessions" }, el("tr", {}, ["session", "inputs", "phase", "first input", "last input", "forked from"].map((h) => el("th", {}, h))), rows)
    : el("p", { class: "muted" }, "no sessions in this store yet"));
  timer = setInterval(async () => { if (!location.hash.startsWith("#/s/")) { const again = await api("/api/sessions"); if (again.length !== sessions.length) renderSessions(); } }, FOLLOW_MS);
}

function follow() {
  if (EMBED) return;
  document.getElementById("live").hidden = false;
  timer = setInterval(async () => {
    try {
      const head = await api(`/api/sessions/${encodeURIComponent(current.sid)}/head`);
      if (head.length !== current.length) {
        current.view = await api(`/api/sessions/${encodeURIComponent(current.sid)}`);
        current.length = current.view.session.length;
        await renderSession();
      }
    } catch (error) { /* the next poll tries again */ }
  }, FOLLOW_MS);
}

async function renderSession() {
  const view = current.view;
  document.getElementById("where").textContent = "session " + current.sid;
  const s = view.session;
  const header = el("div", {}, el("h1", {}, current.sid, " ", el("span", { class: `badge ${view.phase}`, id: "phase" }, view.phase)),
    el("p", { class: "muted" }, `${s.length} records`, s.parent ? ` · forked from ${s.parent.session_id} at ${s.parent.seq}` : "",
      s.first_timestamp ? ` · ${fmtTime(s.first_timestamp)} → ${fmtTime(s.last_timestamp)}` : ""));
  const left = el("div", {}, approvals(view), timeline(view), budgets(view), verifyPanel(), records(view));
  const right = el("div", {}, el("div", { class: "panel", id: "detail" }, el("p", { class: "muted" }, "select a record or a bar to see the state there")),
    conversation(view));
  show(header, el("div", { class: "grid" }, left, right));
  if (current.seq) await select(current.seq);
}

function approvals(view) {
  const box = el("div", { id: "approvals" });
  if (!view.approvals.length) return box;
  box.append(el("h2", {}, "Waiting for a decision"));
  for (const call of view.approvals) {
    const decide = (approve) => async () => {
      try {
        const reason = approve ? "" : "denied in the viewer";
        await post(`/api/sessions/${encodeURIComponent(current.sid)}/decisions`, { tool_call_id: call.tool_call_id, approve, reason });
        current.view = await api(`/api/sessions/${encodeURIComponent(current.sid)}`);
        current.length = current.view.session.length;
        await renderSession();
      } catch (error) { box.append(el("p", { class: "verify bad" }, String(error.message))); }
    };
    box.append(el("div", { class: "approval", "data-call": call.tool_call_id },
      el("b", {}, call.name), ` (${call.tool_call_id}) `, el("pre", {}, call.parameters),
      EMBED ? el("span", { class: "muted" }, "decide with agent-core ui") : [el("button", { class: "approve", onclick: decide(true) }, "Approve"), " ",
        el("button", { class: "deny", onclick: decide(false) }, "Deny")]));
  }
  return box;
}

function timeline(view) {
  const lanes = view.lanes;
  const panel = el("div", { class: "panel" }, el("h2", {}, "Timeline"));
  if (!lanes.length) return panel.appendChild(el("p", { class: "muted" }, "no effects yet")) && panel;
  const t0 = Math.min(...lanes.map((l) => l.start)), t1 = Math.max(...lanes.map((l) => l.end), t0 + 1);
  const pct = (t) => (100 * (t - t0)) / (t1 - t0);
  const box = el("div", { class: "timeline", id: "timeline" });
  for (const lane of lanes) {
    const tokens = (lane.tokens[0] || lane.tokens[1] ? ` · ${lane.tokens[0]} in / ${lane.tokens[1]} out` : "") + (lane.cost ? ` · cost ${lane.cost}` : "");
    const title = `${lane.name} (${lane.key}) ${lane.outcome} · records ${lane.start_seq}–${lane.end_seq || "…"} · ${lane.end - lane.start} ms${tokens}${lane.error ? "\n" + lane.error : ""}`;
    box.append(el("div", { class: "lane", "data-key": lane.key, "data-kind": lane.kind, "data-outcome": lane.outcome, title, onclick: () => go(lane.start_seq) },
      el("span", { class: "label" }, lane.kind === "turn" ? lane.name : "  " + lane.name),
      el("span", { class: "track" }, el("span", { class: `bar ${lane.outcome}`, style: `left:${pct(lane.start)}%;width:${Math.max(pct(lane.end) - pct(lane.start), 0)}%` }),
        ...view.budgets.ran_out.filter((r) => lane.kind === "turn" && lane.key === `turn:${r.turn}`).map((r) => el("span", { class: "marker", title: `ran out: ${r.reason}`, style: `left:${pct(r.at)}%` })))));
  }
  const legend = el("div", { class: "legend" }, [["completed", "var(--ok)"], ["failed", "var(--fail)"], ["cancelled", "var(--cancel)"], ["running", "var(--run)"], ["retry backoff", "var(--wait)"]]
    .map(([name, color]) => el("span", {}, el("i", { style: `background:${color}` }), name)));
  panel.append(el("div", { class: "axis" }, el("span", {}, "0 s"), el("span", {}, ((t1 - t0) / 1000).toFixed(3) + " s")), box, legend);
  return panel;
}

function budgets(view) {
  const b = view.budgets;
  if (!b || !b.limits) return el("div");
  const names = { model_calls: "model calls", tool_calls: "tool calls", tokens: "tokens", turn_ms: "turn time (ms)", cost: "cost", session_cost: "session cost" };
  const rows = Object.entries(names).map(([key, label]) => el("tr", {}, el("td", {}, label), el("td", {}, b.used ? b.used[key] : "–"), el("td", {}, b.limits[key] ?? "no limit")));
  return el("div", { class: "panel", id: "budgets" }, el("h2", {}, "Budgets", b.used ? ` (turn ${b.used.turn})` : " (between turns)"),
    el("table", {}, el("tr", {}, el("th", {}, "budget"), el("th", {}, "used"), el("th", {}, "limit")), rows),
    b.ran_out.map((r) => el("p", { class: "verify bad" }, `turn ${r.turn} ran out: ${r.reason} (record ${r.seq})`)));
}

function verifyPanel() {
  const out = el("span", { id: "verify-result" });
  const run = async () => {
    out.textContent = "replaying…";
    try {
      const v = EMBED ? EMBED.verify : await api(`/api/sessions/${encodeURIComponent(current.sid)}/verify`);
      out.className = "verify " + (v.ok ? "ok" : "bad");
      out.textContent = v.ok ? `verified: ${v.records} records, ${v.turns_checked} turn digests, ${v.states_checked} state hashes; state hash ${v.state_hash.slice(0, 16)}…`
        : (v.divergence ? `DIVERGED at record ${v.divergence.record} (${v.divergence.input_type}): ${v.divergence.kind} expected ${v.divergence.expected}, got ${v.divergence.actual}` : v.message);
    } catch (error) { out.className = "verify bad"; out.textContent = String(error.message); }
  };
  return el("div", { class: "panel" }, el("button", { id: "verify", onclick: run }, "replay --verify"), " ", out);
}

function records(view) {
  const origin = view.records.length ? view.records[0].timestamp : 0;
  const rows = view.records.map((r) => el("tr", { class: "record", "data-seq": r.seq, onclick: () => go(r.seq) },
    el("td", {}, r.seq), el("td", {}, offset(r.timestamp, origin)), el("td", {}, r.type),
    el("td", {}, r.phase_before === r.phase_after ? r.phase_after : `${r.phase_before} → ${r.phase_after}`), el("td", {}, r.summary)));
  return el("div", { class: "panel" }, el("h2", {}, "Records"), el("div", { class: "records" }, el("table", { id: "records" }, rows)));
}

function conversation(view) {
  return el("div", { class: "panel", id: "conversation" }, el("h2", {}, "Conversation"),
    view.conversation.map((e) => el("div", { class: `entry ${e.kind}${e.ok ? "" : " bad"}`, "data-seq": e.seq },
      el("div", { class: "title" }, `#${e.seq} ${e.title}`), e.text ? el("pre", {}, e.text) : null)));
}

function go(seq) { location.hash = `#/s/${encodeURIComponent(current.sid)}/r/${seq}`; }

async function select(seq) {
  for (const row of document.querySelectorAll(".record")) row.classList.toggle("selected", +row.dataset.seq === seq);
  const detail = document.getElementById("detail");
  let d;
  try { d = EMBED ? EMBED.view.details[seq] : await api(`/api/sessions/${encodeURIComponent(current.sid)}/records/${seq}`); }
  catch (error) { detail.replaceChildren(el("p", { class: "verify bad" }, String(error.message))); return; }
  const tabs = ["state", "diff", "context", "input"];
  const body = { state: () => el("pre", {}, JSON.stringify(d.state, null, 2)),
    diff: () => d.diff.length ? el("table", { id: "diff" }, d.diff.map((c) => el("tr", {}, el("td", {}, c.path), el("td", {}, el("pre", {}, JSON.stringify(c.before))), el("td", {}, el("pre", {}, JSON.stringify(c.after)))))) : el("p", { class: "muted" }, "no change"),
    context: () => d.context ? el("div", {}, el("p", { class: "muted" }, `sent by ${d.context.key}; tools: ${d.context.tools.join(", ") || "none"}`),
      d.context.system ? el("pre", {}, "system: " + d.context.system) : null,
      d.context.messages.map((m) => el("pre", { class: "context-message" }, `${m.role}: ` + m.parts.map((p) => p.content ?? `${p.type} ${p.name || ""} ${p.arguments || p.response || ""}`).join("\n"))))
      : el("p", { class: "muted" }, "no model call starts at this record"),
    input: () => el("pre", {}, JSON.stringify(d.input, null, 2)) };
  const tab = current.tab in body ? current.tab : "state";
  const fork = EMBED ? null : el("button", { id: "fork", onclick: async () => {
    try { const made = await post(`/api/sessions/${encodeURIComponent(current.sid)}/fork`, { at: seq }); location.hash = `#/s/${encodeURIComponent(made.session_id)}`; }
    catch (error) { detail.append(el("p", { class: "verify bad" }, String(error.message))); } } }, "fork here");
  detail.replaceChildren(el("h2", {}, `Record ${seq}: ${d.input.type} `, fork),
    el("div", { class: "tabs" }, tabs.map((t) => el("button", { class: t === tab ? "on" : null, "data-tab": t, onclick: () => { current.tab = t; select(seq); } }, t))),
    body[tab]());
}

window.addEventListener("hashchange", route);
route();
