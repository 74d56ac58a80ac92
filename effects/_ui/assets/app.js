// The agent-core session viewer. Served by `agent-core ui DB`: it asks the server for pages of records and
// follows a live session by asking for the records after the last one it has, appending them; it never
// fetches or redraws the whole session. Or written into one file by `agent-core inspect DB SESSION --html FILE`:
// then the records it holds are in the #agent-core-data element and nothing is fetched.
"use strict";
const DATA = document.getElementById("agent-core-data");
const EMBED = DATA ? JSON.parse(DATA.textContent) : null;
const FOLLOW_MS = 500; // how often a followed session asks for new records when it has them all
const TREE_MS = 2000; // a followed session asks for its tree of sessions again at most this often, when records arrive
const MAX_ROWS = 2000; // records the page holds at once; following drops the oldest beyond them
const DETAIL_BYTES = 256 * 1024, MAX_DETAIL_BYTES = 4 * 1024 * 1024;
const BUDGET_REASONS = ["max-model-calls", "max-tool-calls", "max-tokens", "timeout", "max-cost", "max-session-cost", "unpriced", "budget-pool"];
let view = null; // the session shown (see openView)
let listing = null; // the session list shown
let tab = "state";

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

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;
const objects = (list) => (list || []).filter((item) => item !== null && typeof item === "object"); // a cut list ends in a note
const fmtTime = (ms) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
const sessionPath = (sid) => `/api/sessions/${enc(sid)}`;

function show(...nodes) { $("main").replaceChildren(...nodes); }

function failure(error) { show(el("p", { class: "verify bad", id: "error" }, String(error.message || error))); }

function stop() {
  if (view) { clearTimeout(view.timer); clearTimeout(view.treeTimer); view.closed = true; }
  if (listing) { clearTimeout(listing.timer); listing.closed = true; }
  view = listing = null;
}

async function route() {
  const match = location.hash.match(/^#\/s\/([^/]+)(?:\/r\/(\d+))?/);
  try {
    if (EMBED) {
      if (!view) openEmbedded();
      if (match && match[2]) await select(+match[2]);
      return;
    }
    if (!match) { stop(); return await openList(); }
    const sid = decodeURIComponent(match[1]);
    if (!view || view.sid !== sid) await openSession(sid);
    if (match[2] && view) await select(+match[2]);
  } catch (error) { stop(); failure(error); }
}

// ---- the session list, a page at a time

async function openList() {
  const mine = listing = { loaded: 0, total: 0, timer: null, closed: false };
  $("where").textContent = "sessions";
  $("live").hidden = true;
  const body = el("tbody", {});
  const more = el("button", { id: "more-sessions", hidden: true, onclick: () => loadSessions(mine, body, more) }, "");
  show(el("h1", {}, "Sessions"),
    el("table", { id: "sessions" }, el("thead", {}, el("tr", {}, ["session", "inputs", "phase", "first input", "last input", "forked from"].map((h) => el("th", {}, h)))), body),
    el("p", { class: "muted", id: "no-sessions", hidden: true }, "no sessions in this store yet"), more);
  await loadSessions(mine, body, more);
  const poll = async () => {
    if (mine.closed) return;
    try {
      if (mine.loaded >= mine.total) await loadSessions(mine, body, more); // new sessions come last
      else { mine.total = (await api("/api/sessions?limit=1")).total; moreText(mine, more); }
    } catch (error) { /* the next look tries again */ }
    if (!mine.closed) mine.timer = setTimeout(poll, 2 * FOLLOW_MS);
  };
  mine.timer = setTimeout(poll, 2 * FOLLOW_MS);
}

async function loadSessions(mine, body, more) {
  const page = await api(`/api/sessions?offset=${mine.loaded}`);
  if (mine.closed || page.offset !== mine.loaded) return;
  body.append(...page.sessions.map((s) => el("tr", { class: "session", "data-session": s.session_id },
    el("td", {}, el("a", { href: `#/s/${enc(s.session_id)}` }, s.session_id)),
    el("td", {}, s.length), el("td", {}, el("span", { class: `badge ${s.phase}`, title: s.error || null }, s.phase)),
    el("td", {}, s.first_timestamp ? fmtTime(s.first_timestamp) : ""), el("td", {}, s.last_timestamp ? fmtTime(s.last_timestamp) : ""),
    el("td", {}, s.parent ? `${s.parent.session_id} at ${s.parent.seq}` : ""))));
  mine.loaded += page.sessions.length;
  mine.total = page.total;
  $("no-sessions").hidden = page.total > 0;
  moreText(mine, more);
}

function moreText(mine, more) {
  more.hidden = mine.loaded >= mine.total;
  more.textContent = `load more (${mine.total - mine.loaded} more sessions)`;
}

// ---- one session: a window of its records, followed live

function openView(sid, session) {
  stop();
  view = { sid, session, lo: 1, hi: 0, origin: session.first_timestamp || 0, lanes: new Map(), order: [], open: new Set(),
    ranOut: new Map(), treeAt: 0, treeTimer: null, following: !EMBED, busy: false, again: false, timer: null, closed: false, selected: null, approvals: "" };
  $("where").textContent = "session " + sid;
  const records = el("table", { id: "records" }, el("tbody", {}));
  records.addEventListener("click", (event) => { const row = event.target.closest("tr.record"); if (row) go(+row.dataset.seq); });
  const lanes = el("div", { class: "timeline", id: "timeline" });
  lanes.addEventListener("click", (event) => { const lane = event.target.closest(".lane"); if (lane) go(+lane.dataset.startSeq); });
  const legend = el("div", { class: "legend" }, [["completed", "var(--ok)"], ["failed", "var(--fail)"], ["cancelled", "var(--cancel)"], ["running", "var(--run)"], ["retry backoff", "var(--wait)"]]
    .map(([name, color]) => el("span", {}, el("i", { style: `background:${color}` }), name)));
  const header = el("div", {}, el("h1", {}, sid, " ", el("span", { class: "badge", id: "phase" }, "")), el("p", { class: "muted", id: "about" }));
  const left = el("div", {}, el("div", { id: "approvals" }), el("div", { class: "panel", id: "tree", hidden: true }),
    el("div", { class: "panel" }, el("h2", {}, "Timeline"), el("div", { class: "axis" }, el("span", { id: "axis-from" }), el("span", { id: "axis-to" })), lanes, legend),
    el("div", { class: "panel", id: "budgets" }), verifyPanel(),
    el("div", { class: "panel" }, el("h2", {}, "Records ", el("span", { class: "muted", id: "window" })),
      el("p", {}, el("button", { id: "earlier", hidden: true, onclick: earlier }), el("span", { class: "muted", id: "earlier-note" })),
      el("div", { class: "records", id: "records-box" }, records),
      el("p", {}, el("button", { id: "newest", hidden: true, onclick: () => openSession(sid) }, "newer records are not shown: go to the newest"))));
  const right = el("div", {}, el("div", { class: "panel", id: "detail" }, el("p", { class: "muted" }, "select a record or a bar to see the state there")),
    el("div", { class: "panel", id: "conversation" }, el("h2", {}, "Conversation"), el("div", { id: "entries" })));
  show(header, el("div", { class: "grid" }, left, right));
  return view;
}

async function openSession(sid) {
  const page = await api(sessionPath(sid));
  const mine = openView(sid, page.session);
  mine.lo = page.from;
  mine.hi = page.from - 1;
  addPage(mine, page, "after");
  $("live").hidden = false;
  mine.timer = setTimeout(() => follow(mine), FOLLOW_MS);
  showTree(mine); // the records first; the tree when it comes
}

// ---- the tree of sessions the shown one belongs to (agents called as tools run child sessions)

function treeSoon(mine) {
  if (mine.treeTimer !== null) return;
  const wait = Math.max(0, mine.treeAt + TREE_MS - Date.now());
  mine.treeTimer = setTimeout(() => { mine.treeTimer = null; if (!mine.closed) showTree(mine); }, wait);
}

async function showTree(mine) {
  mine.treeAt = Date.now();
  const panel = $("tree");
  let tree;
  try { tree = await api(`${sessionPath(mine.sid)}/tree`); } catch (error) {
    if (!mine.closed) { panel.replaceChildren(el("p", { class: "verify bad" }, `the tree of sessions cannot be read: ${error.message}`)); panel.hidden = false; }
    return;
  }
  if (mine.closed || !tree.children.length) return; // a session alone in its tree: no panel
  const node = (n) => el("li", { "data-session": n.session_id },
    n.session_id === mine.sid ? el("strong", { class: "current" }, n.session_id) : el("a", { href: `#/s/${enc(n.session_id)}` }, n.session_id),
    n.tool_call_id ? el("span", { class: "muted" }, ` call ${n.tool_call_id}`) : null, " ",
    el("span", { class: `badge ${n.phase}` }, n.phase), n.outcome ? el("span", { class: "muted" }, ` last turn ${n.outcome}${n.reason ? ": " + n.reason : ""}`) : null,
    n.children.length ? el("ul", {}, n.children.map(node)) : null);
  panel.replaceChildren(el("h2", {}, "Sessions in this tree"), el("ul", { class: "tree" }, node(tree)),
    tree.left_off ? el("p", { class: "muted" }, `${tree.left_off} more sessions in this tree are not listed`) : null);
  panel.hidden = false;
}

function openEmbedded() {
  const mine = openView(EMBED.session.session_id, EMBED.session);
  mine.lo = EMBED.window.from;
  mine.hi = EMBED.window.from - 1;
  mine.details = new Map(EMBED.records.map((r) => [r.record.seq, r.detail]));
  const page = { session: EMBED.session, from: EMBED.window.from, to: EMBED.window.to, records: EMBED.records.map((r) => r.record),
    conversation: EMBED.records.flatMap((r) => objects(r.conversation)), lanes: EMBED.records.flatMap((r) => objects(r.lanes)), ...EMBED.end };
  addPage(mine, page, "after");
}

async function follow(mine) {
  if (mine.closed || !mine.following) return;
  if (mine.busy) { mine.again = true; return; }
  mine.busy = true;
  let next = FOLLOW_MS;
  try {
    const page = await api(`${sessionPath(mine.sid)}?after=${mine.hi}`);
    if (!mine.closed && mine.following && page.from === mine.hi + 1) {
      addPage(mine, page, "after");
      if (page.records.length) treeSoon(mine); // children may have started
      if (page.to < page.session.length) next = 0; // catching up
    }
    $("live").textContent = "● following";
  } catch (error) { $("live").textContent = "● following: " + error.message; }
  mine.busy = false;
  if (mine.again) { mine.again = false; next = 0; }
  if (!mine.closed) { clearTimeout(mine.timer); mine.timer = setTimeout(() => follow(mine), next); }
}

async function earlier() {
  const mine = view;
  if (EMBED || !mine || mine.lo <= 1) return;
  const button = $("earlier");
  button.disabled = true;
  try {
    const page = await api(`${sessionPath(mine.sid)}?before=${mine.lo}`);
    if (!mine.closed && page.to === mine.lo - 1) addPage(mine, page, "before");
  } catch (error) { $("earlier-note").textContent = " " + error.message; }
  button.disabled = false;
}

// Adds a page to the window: rows, conversation entries and lanes; "after" pages also bring the state they end in.
function addPage(mine, page, where) {
  mine.session = page.session;
  const bottom = (node) => node.scrollTop + node.clientHeight >= node.scrollHeight - 4;
  const box = $("records-box"), atBottom = bottom(box), said = $("entries"), saidAtBottom = bottom(said);
  const rows = page.records.filter((r) => r && r.seq).map(recordRow);
  const entries = objects(page.conversation).map(entryNode);
  const tbody = $("records").tBodies[0], list = $("entries");
  if (where === "after") {
    tbody.append(...rows);
    list.append(...entries);
    mine.hi = page.to;
    for (const lane of objects(page.lanes)) { mine.open.delete(lane.key); putLane(mine, lane); }
    const open = objects(page.open);
    const still = new Set(open.map((lane) => lane.key));
    for (const key of mine.open) if (!still.has(key)) dropLane(mine, key); // ended where the page was cut
    mine.open = still;
    for (const lane of open) putLane(mine, lane);
    summary(mine, page);
    trim(mine, "oldest");
  } else {
    tbody.prepend(...rows);
    list.prepend(...entries);
    mine.lo = page.from;
    for (const lane of objects(page.lanes)) putLane(mine, lane);
    if (trim(mine, "newest")) { mine.following = false; clearTimeout(mine.timer); $("live").hidden = true; $("newest").hidden = false; }
  }
  windowText(mine);
  axis(mine);
  if (where === "after" && atBottom) box.scrollTop = box.scrollHeight; // the one layout, after every change
  if (where === "after" && saidAtBottom) said.scrollTop = said.scrollHeight;
}

// Keeps at most MAX_ROWS records, dropping the oldest (or the newest); says whether it dropped any.
function trim(mine, which) {
  const tbody = $("records").tBodies[0];
  let dropped = false;
  while (tbody.rows.length > MAX_ROWS) {
    const row = which === "oldest" ? tbody.firstElementChild : tbody.lastElementChild;
    row.remove();
    dropped = true;
  }
  if (!dropped) return false;
  mine.lo = +tbody.firstElementChild.dataset.seq;
  mine.hi = +tbody.lastElementChild.dataset.seq;
  const list = $("entries");
  while (list.firstElementChild && +list.firstElementChild.dataset.seq < mine.lo) list.firstElementChild.remove();
  while (list.lastElementChild && +list.lastElementChild.dataset.seq > mine.hi) list.lastElementChild.remove();
  for (const [key, item] of mine.lanes) {
    const lane = item.lane;
    if (lane.start_seq > mine.hi || (lane.end_seq && lane.end_seq < mine.lo)) dropLane(mine, key);
  }
  return true;
}

function recordRow(r) {
  const phases = r.phase_before === r.phase_after ? r.phase_after : `${r.phase_before} → ${r.phase_after}`;
  return el("tr", { class: "record", "data-seq": r.seq, "data-ts": r.timestamp },
    el("td", {}, r.seq), el("td", {}, "+" + ((r.timestamp - view.origin) / 1000).toFixed(3) + "s"), el("td", {}, r.type),
    el("td", {}, phases), el("td", {}, r.summary));
}

function entryNode(e) {
  return el("div", { class: `entry ${e.kind}${e.ok ? "" : " bad"}`, "data-seq": e.seq },
    el("div", { class: "title" }, `#${e.seq} ${e.title}`), e.text ? el("pre", {}, e.text) : null);
}

function windowText(mine) {
  const n = mine.session.length;
  const shown = mine.hi >= mine.lo ? `records ${mine.lo}–${mine.hi} of ${n}` : `none of ${n} records`;
  $("window").textContent = `(${shown})`;
  const button = $("earlier"), note = $("earlier-note");
  if (EMBED) {
    button.hidden = true;
    note.textContent = mine.lo > 1 ? `records 1–${mine.lo - 1} are not in this file: agent-core inspect DB SESSION --html FILE --from M --at ${mine.lo - 1} writes them` : "";
  } else {
    button.hidden = mine.lo <= 1;
    button.textContent = `load earlier records (${mine.lo - 1} before these)`;
  }
  const s = mine.session;
  $("about").textContent = `${s.length} records` + (s.parent ? ` · forked from ${s.parent.session_id} at ${s.parent.seq}` : "") +
    (s.first_timestamp ? ` · ${fmtTime(s.first_timestamp)} → ${fmtTime(s.last_timestamp)}` : "");
}

// ---- the timeline: one lane per turn and effect; bars placed by CSS from the window's start and span

function sortKey(lane) { return [lane.start, lane.start_seq, lane.kind === "turn" ? 0 : 1]; }
function before(a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; }

function putLane(mine, lane) {
  const known = mine.lanes.get(lane.key);
  if (known) { known.lane = lane; drawLane(mine, known.node, lane); return; }
  const node = el("div", { class: "lane", "data-key": lane.key, "data-kind": lane.kind },
    el("span", { class: "label" }, lane.kind === "turn" ? lane.name : "  " + lane.name), el("span", { class: "track" }, el("span", { class: "bar" })));
  drawLane(mine, node, lane);
  const k = sortKey(lane);
  let lo = 0, hi = mine.order.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (before(mine.order[mid].k, k) <= 0) lo = mid + 1; else hi = mid; }
  const next = mine.order[lo];
  mine.order.splice(lo, 0, { k, key: lane.key, node });
  $("timeline").insertBefore(node, next ? next.node : null);
  mine.lanes.set(lane.key, { lane, node });
}

function dropLane(mine, key) {
  const known = mine.lanes.get(key);
  if (!known) return;
  known.node.remove();
  mine.lanes.delete(key);
  mine.order.splice(mine.order.findIndex((item) => item.key === key), 1);
  if (mine.ranOut.delete(key)) budgets(mine);
}

function drawLane(mine, node, lane) {
  const tokens = (lane.tokens && (lane.tokens[0] || lane.tokens[1]) ? ` · ${lane.tokens[0]} in / ${lane.tokens[1]} out` : "") + (lane.cost ? ` · cost ${lane.cost}` : "");
  node.dataset.outcome = lane.outcome;
  node.dataset.startSeq = lane.start_seq;
  node.title = `${lane.name} (${lane.key}) ${lane.outcome} · records ${lane.start_seq}–${lane.end_seq || "…"} · ${lane.end - lane.start} ms${tokens}${lane.error ? "\n" + lane.error : ""}`;
  const track = node.lastElementChild, bar = track.firstElementChild;
  bar.className = `bar ${lane.outcome}`;
  bar.style.setProperty("--s", lane.start - mine.origin);
  bar.style.setProperty("--d", Math.max(lane.end - lane.start, 0));
  track.querySelector(".marker")?.remove();
  if (lane.kind === "turn" && lane.outcome === "failed" && BUDGET_REASONS.includes(lane.reason)) {
    const marker = el("span", { class: "marker", title: `ran out: ${lane.reason}` });
    marker.style.setProperty("--s", lane.end - mine.origin);
    track.append(marker);
    mine.ranOut.set(lane.key, lane);
    budgets(mine);
  }
}

function axis(mine) {
  const first = $("records").tBodies[0].firstElementChild, last = $("records").tBodies[0].lastElementChild;
  let t0 = first ? +first.dataset.ts : mine.origin, t1 = last ? +last.dataset.ts : t0;
  for (const key of mine.open) t1 = Math.max(t1, mine.lanes.get(key)?.lane.end ?? t1);
  const box = $("timeline");
  box.style.setProperty("--t0", t0 - mine.origin);
  box.style.setProperty("--span", Math.max(t1 - t0, 1));
  $("axis-from").textContent = ((t0 - mine.origin) / 1000).toFixed(3) + " s";
  $("axis-to").textContent = ((t1 - mine.origin) / 1000).toFixed(3) + " s";
}

// ---- the state the newest records end in: phase, approvals, budgets

function summary(mine, page) {
  const badge = $("phase");
  badge.textContent = page.phase;
  badge.className = `badge ${page.phase}`;
  mine.budgets = page.budgets;
  budgets(mine);
  const approvals = objects(page.approvals);
  const key = JSON.stringify(approvals);
  if (key === mine.approvals) return;
  mine.approvals = key;
  const box = $("approvals");
  box.replaceChildren();
  if (!approvals.length) return;
  box.append(el("h2", {}, "Waiting for a decision"));
  for (const call of approvals) {
    const decide = (approve) => async () => {
      try {
        const reason = approve ? "" : "denied in the viewer";
        await post(`${sessionPath(mine.sid)}/decisions`, { tool_call_id: call.tool_call_id, approve, reason });
        follow(mine);
      } catch (error) { box.append(el("p", { class: "verify bad" }, String(error.message))); }
    };
    box.append(el("div", { class: "approval", "data-call": call.tool_call_id },
      el("b", {}, call.name), ` (${call.tool_call_id}) `, el("pre", {}, call.parameters),
      EMBED ? el("span", { class: "muted" }, "decide with agent-core ui") : [el("button", { class: "approve", onclick: decide(true) }, "Approve"), " ",
        el("button", { class: "deny", onclick: decide(false) }, "Deny")]));
  }
}

function budgets(mine) {
  const b = mine.budgets, box = $("budgets");
  if (!box) return;
  if (!b || !b.limits) { box.replaceChildren(); box.hidden = true; return; }
  box.hidden = false;
  const names = { model_calls: "model calls", tool_calls: "tool calls", tokens: "tokens", turn_ms: "turn time (ms)", cost: "cost", session_cost: "session cost" };
  const rows = Object.entries(names).map(([key, label]) => el("tr", {}, el("td", {}, label), el("td", {}, b.used ? b.used[key] : "–"), el("td", {}, b.limits[key] ?? "no limit")));
  box.replaceChildren(el("h2", {}, "Budgets", b.used ? ` (turn ${b.used.turn})` : " (between turns)"),
    el("table", {}, el("tr", {}, el("th", {}, "budget"), el("th", {}, "used"), el("th", {}, "limit")), rows),
    [...mine.ranOut.values()].map((r) => el("p", { class: "verify bad" }, `${r.name} ran out: ${r.reason} (record ${r.end_seq})`)));
}

function verifyPanel() {
  const out = el("span", { id: "verify-result" });
  const run = async () => {
    out.textContent = "replaying…";
    try {
      const v = EMBED ? EMBED.verify : await api(`${sessionPath(view.sid)}/verify`);
      out.className = "verify " + (v.ok ? "ok" : "bad");
      out.textContent = v.ok ? `verified: ${v.records} records, ${v.turns_checked} turn digests, ${v.states_checked} state hashes; state hash ${v.state_hash.slice(0, 16)}…`
        : (v.divergence ? `DIVERGED at record ${v.divergence.record} (${v.divergence.input_type}): ${v.divergence.kind} expected ${v.divergence.expected}, got ${v.divergence.actual}` : v.message);
    } catch (error) { out.className = "verify bad"; out.textContent = String(error.message); }
  };
  return el("div", { class: "panel" }, el("button", { id: "verify", onclick: run }, "replay --verify"), " ", out);
}

// ---- one record: its state, diff, model context and input

function go(seq) { location.hash = `#/s/${enc(view.sid)}/r/${seq}`; }

async function select(seq, bytes) {
  const mine = view;
  mine.selected?.classList.remove("selected");
  mine.selected = document.querySelector(`tr.record[data-seq="${seq}"]`);
  mine.selected?.classList.add("selected");
  const detail = $("detail");
  let d;
  try {
    if (EMBED) {
      d = mine.details.get(seq);
      if (!d) throw new Error(`record ${seq} is not in this file (it holds records ${mine.lo}–${mine.hi})`);
    } else d = await api(`${sessionPath(mine.sid)}/records/${seq}?bytes=${bytes || DETAIL_BYTES}`);
  } catch (error) { detail.replaceChildren(el("p", { class: "verify bad" }, String(error.message))); return; }
  if (view !== mine) return;
  const tabs = ["state", "diff", "context", "input"];
  const diffs = objects(d.diff);
  const body = { state: () => el("pre", {}, JSON.stringify(d.state, null, 2)),
    diff: () => diffs.length ? el("table", { id: "diff" }, diffs.map((c) => el("tr", {}, el("td", {}, c.path), el("td", {}, el("pre", {}, JSON.stringify(c.before))), el("td", {}, el("pre", {}, JSON.stringify(c.after)))))) : el("p", { class: "muted" }, "no change"),
    context: () => d.context && typeof d.context === "object" ? el("div", {}, el("p", { class: "muted" }, `sent by ${d.context.key}; tools: ${objectsOrText(d.context.tools).join(", ") || "none"}`),
      d.context.system ? el("pre", {}, "system: " + d.context.system) : null,
      objects(d.context.messages).map((m) => el("pre", { class: "context-message" }, `${m.role}: ` + objects(m.parts).map((p) => p.content ?? `${p.type} ${p.name || ""} ${p.arguments || p.response || ""}`).join("\n"))))
      : el("p", { class: "muted" }, "no model call starts at this record"),
    input: () => el("pre", {}, JSON.stringify(d.input, null, 2)) };
  const shown = tabs.includes(tab) ? tab : "state";
  const fork = EMBED ? null : el("button", { id: "fork", onclick: async () => {
    try { const made = await post(`${sessionPath(mine.sid)}/fork`, { at: seq }); location.hash = `#/s/${enc(made.session_id)}`; }
    catch (error) { detail.append(el("p", { class: "verify bad" }, String(error.message))); } } }, "fork here");
  const budget = bytes || DETAIL_BYTES;
  const more = d.cut && !EMBED && budget < MAX_DETAIL_BYTES
    ? el("p", { class: "muted", id: "cut" }, `cut to fit ${Math.round(budget / 1024)} KiB of ${Math.round(d.bytes / 1024)} KiB `,
      el("button", { id: "show-more", onclick: () => select(seq, Math.min(budget * 4, MAX_DETAIL_BYTES)) }, "show more"))
    : d.cut ? el("p", { class: "muted", id: "cut" }, "cut to fit; agent-core show and export print a session whole") : null;
  detail.replaceChildren(...[el("h2", {}, `Record ${seq}: ${d.input && d.input.type} `, fork),
    el("div", { class: "tabs" }, tabs.map((t) => el("button", { class: t === shown ? "on" : null, "data-tab": t, onclick: () => { tab = t; select(seq, bytes); } }, t))),
    more, body[shown]()].filter(Boolean));
}

function objectsOrText(list) { return (list || []).map(String); }

window.addEventListener("hashchange", route);
route();
