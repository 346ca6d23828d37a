// The spaseq console (GET / in a browser): the registered queries polled every second (rates
// from successive polls), one followed live (SSE read with fetch, so the token goes along),
// its automaton (SVG drawn by the server), register / delete / push / SPARQL. No library, no
// network beyond this server (docs/decisions.md 77).
"use strict";

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "spaseq-token";
const POLL_MS = 1000;
const SPAN_S = 120;       // seconds of history in the charts
const KEEP_ROWS = 500;    // matches kept in the followed table
const XSD = "http://www.w3.org/2001/XMLSchema#";
const RDF_LANG = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const SVG_NS = "http://www.w3.org/2000/svg";

const known = new Map();    // query id -> its latest GET /queries/{id}
const history = new Map();  // query id -> [{t, events, matches}] (seconds, counts)
let following = null;       // {id, abort: AbortController, last: number, prefixes, variables}

// ------------------------------------------------------------------ calls

function headers(extra) {
  const h = Object.assign({}, extra || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function call(path, options) {
  const opts = Object.assign({}, options || {});
  opts.headers = headers(opts.headers);
  const response = await fetch(path, opts);
  if (response.status === 401) {
    const body = await response.clone().json().catch(() => ({}));
    askToken(body.error || "this server needs its token");
  }
  return response;
}

async function answer(response) {
  const text = await response.text();
  try { return JSON.parse(text); } catch (e) { return { error: text || response.statusText }; }
}

async function getJson(path) {
  const response = await call(path, { headers: { Accept: "application/json" } });
  const data = await answer(response);
  if (!response.ok) throw Object.assign(new Error(data.error), { status: response.status });
  return data;
}

function say(where, text, ok) {
  where.textContent = text;
  where.className = ok ? "ok" : "error";
}

function askToken(why) {
  $("token-why").textContent = why;
  $("token-form").hidden = false;
  $("token").focus();
}

// ------------------------------------------------------------------ terms as values

/** The query's prefixes, longest namespace first (so the most specific one is used). */
function prefixTable(prefixes) {
  return Object.entries(prefixes || {}).sort((a, b) => b[1].length - a[1].length);
}

function compact(iri, table) {
  for (const [p, ns] of table) {
    if (ns && iri.startsWith(ns)) {
      const local = iri.slice(ns.length);
      if (/^[\p{L}\p{N}_]([\p{L}\p{N}_\-.]*[\p{L}\p{N}_\-])?$/u.test(local) || local === "") return p + ":" + local;
    }
  }
  return null;
}

/** A SPARQL JSON term as a person reads it: prefixed names, literals as their values (a
 * language tag or a datatype outside XSD shown after them, small); the N-Triples in the title. */
function termCell(term, table) {
  const td = document.createElement("td");
  if (!term) return td;
  let shown, nt, extra = null;
  if (term.type === "uri") {
    nt = "<" + term.value + ">";
    shown = compact(term.value, table) || nt;
    td.className = "iri";
  } else if (term.type === "bnode") {
    shown = nt = "_:" + term.value;
  } else {
    shown = term.value;
    const dt = term.datatype;
    nt = JSON.stringify(term.value);
    if (term["xml:lang"]) {
      extra = "@" + term["xml:lang"];
      nt += extra;
    } else if (dt) {
      nt += "^^<" + dt + ">";
      if (!dt.startsWith(XSD) && dt !== RDF_LANG) extra = "^^" + (compact(dt, table) || "<" + dt + ">");
    }
    td.className = "literal" + (dt && /#(integer|decimal|double|float|int|long|short)$/.test(dt) ? " n" : "");
  }
  td.textContent = shown;
  if (extra) {
    const small = document.createElement("small");
    small.textContent = extra;
    td.appendChild(small);
  }
  td.title = nt;
  return td;
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

// ------------------------------------------------------------------ charts (SVG, by hand)

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  return el;
}

/** Rates (per second) between successive polls: [{t, events, matches}]. */
function rates(samples) {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1], b = samples[i], dt = b.t - a.t;
    if (dt > 0) out.push({ t: b.t, events: Math.max(0, (b.events - a.events) / dt),
                           matches: Math.max(0, (b.matches - a.matches) / dt) });
  }
  return out;
}

/** events/s and matches/s over the last SPAN_S seconds as two polylines; with axes when large. */
function chart(samples, width, height, axes) {
  const svg = svgEl("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: axes ? "chart" : "spark" });
  const r = rates(samples);
  const now = performance.now() / 1000;
  const left = axes ? 44 : 1, right = width - (axes ? 8 : 1), top = axes ? 10 : 2, bottom = height - (axes ? 20 : 2);
  const max = Math.max(1, ...r.map((p) => Math.max(p.events, p.matches))) * 1.1;
  const x = (t) => left + (right - left) * (1 - (now - t) / SPAN_S);
  const y = (v) => bottom - (bottom - top) * (v / max);
  if (axes) {
    for (const v of [0, max / 2, max]) {
      svg.appendChild(svgEl("line", { x1: left, x2: right, y1: y(v), y2: y(v), class: "grid" }));
      const label = svgEl("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end", class: "axis" });
      label.textContent = v === 0 ? "0" : v >= 10 ? Math.round(v) : v.toFixed(1);
      svg.appendChild(label);
    }
    for (const [t, text, anchor] of [[now - SPAN_S, "-2 min", "start"], [now, "now", "end"]]) {
      const label = svgEl("text", { x: x(t), y: height - 4, "text-anchor": anchor, class: "axis" });
      label.textContent = text;
      svg.appendChild(label);
    }
  }
  for (const series of ["events", "matches"]) {
    const points = r.filter((p) => now - p.t <= SPAN_S).map((p) => `${x(p.t).toFixed(1)},${y(p[series]).toFixed(1)}`);
    svg.appendChild(svgEl("polyline", { points: points.join(" "), class: "series " + series }));
  }
  return svg;
}

// ------------------------------------------------------------------ the query list

function record(d) {
  const now = performance.now() / 1000;
  const h = history.get(d.id) || [];
  // a refresh right after a write, between two polls, adds no sample: a rate over a few
  // milliseconds would be a spike, and the next poll's interval counts those events anyway
  if (h.length && now - h[h.length - 1].t < 0.5) return;
  h.push({ t: now, events: d.events || 0, matches: d.results || 0 });
  while (h.length && now - h[0].t > SPAN_S + 2) h.shift();
  history.set(d.id, h);
}

function stateOf(id) {
  const h = history.get(id) || [];
  const d = known.get(id);
  if (!d || !d.events) return "waiting for events";
  const r = rates(h);
  if (r.length && r[r.length - 1].events > 0) return "receiving";
  let since = h.length ? h[h.length - 1].t : 0;
  for (let i = h.length - 1; i > 0 && h[i].events === h[i - 1].events; i--) since = h[i - 1].t;
  const idle = Math.round(performance.now() / 1000 - since);
  return idle >= 2 ? `idle for ${idle} s` : "idle";
}

function rowFor(id) {
  let row = document.querySelector(`#queries tr[data-query="${CSS.escape(id)}"]`);
  if (row) return row;
  row = document.createElement("tr");
  row.dataset.query = id;
  const cls = { events: "n", rate_events: "n", results: "n", rate_matches: "n", late: "n", runs: "n" };
  for (const name of ["id", "streams", "state", "events", "rate_events", "results", "rate_matches", "late", "runs", "spark"]) {
    const td = cell("", cls[name]);
    td.dataset.col = name;
    row.appendChild(td);
  }
  const actions = document.createElement("td");
  const followButton = document.createElement("button");
  followButton.type = "button";
  followButton.className = "follow";
  followButton.textContent = "Follow";
  followButton.onclick = () => follow(id);
  const deleteButton = document.createElement("button");
  deleteButton.type = "button";
  deleteButton.className = "delete";
  deleteButton.textContent = "Delete";
  deleteButton.onclick = () => remove(id);
  actions.append(followButton, " ", deleteButton);
  row.appendChild(actions);
  $("queries").tBodies[0].appendChild(row);
  return row;
}

function renderRow(d) {
  const row = rowFor(d.id);
  const set = (col, text, title) => {
    const td = row.querySelector(`td[data-col="${col}"]`);
    td.textContent = text;
    if (title !== undefined) td.title = title;
    return td;
  };
  const r = rates(history.get(d.id) || []);
  const last = r.length ? r[r.length - 1] : { events: 0, matches: 0 };
  set("id", d.id, d.query);
  set("streams", Object.keys(d.stream_names).join(", "),
      Object.entries(d.stream_names).map(([n, iri]) => n + " <" + iri + ">").join("\n"));
  set("state", stateOf(d.id));
  set("events", String(d.events));
  set("rate_events", last.events.toFixed(1));
  set("results", String(d.results));
  set("rate_matches", last.matches.toFixed(1));
  set("late", String(d.late));
  set("runs", String((d.statistics || {}).runs ?? ""));
  set("spark", "").appendChild(chart(history.get(d.id) || [], 120, 24, false));
  row.classList.toggle("followed", following !== null && following.id === d.id);
}

/** The server's clock (seconds): as a UTC date when it is one (from 2001 on), else as given. */
function clockText(clock) {
  if (clock === null || clock === undefined) return "-";
  const seconds = Number(clock);
  return seconds >= 1e9 && seconds < 1e11 ? new Date(seconds * 1000).toISOString().replace(".000Z", "Z") : String(clock);
}

function renderStatus(index) {
  const dl = $("status");
  dl.textContent = "";
  const items = [["clock", clockText(index.clock)], ["events", index.events], ["unread", index.events_unread],
                 ["queries", index.queries], ["followers", index.followers],
                 ["durable", index.durable ? "yes" : "no"]];
  for (const [k, v] of items) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = String(v);
    dd.dataset.key = k;
    if (k === "clock" && index.clock !== null) dd.title = index.clock + " s";
    dl.append(dt, dd);
  }
}

async function refresh() {
  let index, list;
  try {
    [index, list] = await Promise.all([getJson("/"), getJson("/queries")]);
  } catch (e) {
    if (e.status !== 401) $("status").textContent = "server unreachable: " + e.message;
    return;
  }
  renderStatus(index);
  const details = await Promise.all(list.map((q) => getJson("/queries/" + encodeURIComponent(q.id)).catch(() => null)));
  const present = new Set();
  for (const d of details) {
    if (!d) continue;
    present.add(d.id);
    known.set(d.id, d);
    record(d);
    renderRow(d);
  }
  for (const row of [...document.querySelectorAll("#queries tr[data-query]")]) {
    if (!present.has(row.dataset.query)) { row.remove(); known.delete(row.dataset.query); history.delete(row.dataset.query); }
  }
  $("no-queries").hidden = present.size > 0;
  const streams = new Set(details.filter(Boolean).flatMap((d) => Object.values(d.stream_names)));
  $("known-streams").replaceChildren(...[...streams].map((s) => Object.assign(document.createElement("option"), { value: s })));
  if (following) {
    if (!present.has(following.id)) unfollow();
    else {
      $("chart").replaceChildren(chart(history.get(following.id), 520, 170, true));
      $("follow-state").textContent = stateOf(following.id);
    }
  }
}

async function poll() {
  try { await refresh(); } finally { setTimeout(poll, POLL_MS); }
}

// ------------------------------------------------------------------ following a query

function unfollow() {
  if (following) following.abort.abort();
  following = null;
  $("follow").hidden = true;
}

async function follow(id) {
  unfollow();
  let d;
  try { d = await getJson("/queries/" + encodeURIComponent(id)); } catch (e) { return; }
  known.set(id, d);
  following = { id, abort: new AbortController(), last: Math.max(0, d.results - KEEP_ROWS),
                prefixes: prefixTable(d.prefixes), variables: d.variables };
  $("follow").hidden = false;
  $("follow-id").textContent = id;
  $("follow-text").textContent = d.query;
  $("follow-state").textContent = stateOf(id);
  $("chart").replaceChildren(chart(history.get(id) || [], 520, 170, true));
  const head = $("matches").tHead;
  head.replaceChildren(document.createElement("tr"));
  for (const name of ["#", "time", "start", ...d.variables.map((v) => "?" + v)]) {
    const th = document.createElement("th");
    th.textContent = name;
    head.rows[0].appendChild(th);
  }
  $("matches").tBodies[0].textContent = "";
  $("matches-note").textContent = "";
  for (const row of document.querySelectorAll("#queries tr[data-query]")) row.classList.toggle("followed", row.dataset.query === id);
  drawAutomaton(id);
  stream(following);
}

async function drawAutomaton(id) {
  const response = await call("/queries/" + encodeURIComponent(id) + "/automaton");
  if (response.ok && following && following.id === id) $("automaton").innerHTML = await response.text();
}

function addMatch(f, seq, m) {
  const row = document.createElement("tr");
  row.className = "match";
  row.dataset.seq = seq;
  row.append(cell(seq, "n"), cell(m.time_iso || String(m.time), "time"), cell(m.start_iso || String(m.start), "time"));
  for (const v of f.variables) row.appendChild(termCell(m.bindings[v], f.prefixes));
  const body = $("matches").tBodies[0];
  body.insertBefore(row, body.firstChild);  // newest first
  while (body.rows.length > KEEP_ROWS) body.deleteRow(body.rows.length - 1);
  const total = (known.get(f.id) || {}).results || 0;
  $("matches-note").textContent = body.rows.length < Math.max(total, Number(seq))
    ? `the newest ${body.rows.length} of ${Math.max(total, Number(seq))} matches` : "";
}

/** Read the query's matches as Server-Sent Events over fetch (EventSource cannot send the
 * token), resuming after the last number on a cut-off or a dropped connection. */
async function stream(f) {
  while (following === f) {
    try {
      const response = await call(`/queries/${encodeURIComponent(f.id)}/matches?since=${f.last}`,
                                  { headers: { Accept: "text/event-stream" }, signal: f.abort.signal });
      if (response.status === 410) {  // no longer kept (--keep-matches): from the oldest kept
        const data = await answer(response);
        const m = /since=(\d+)/.exec(data.error || "");
        f.last = m ? Number(m[1]) : f.last + 1;
        continue;
      }
      if (!response.ok) { $("matches-note").textContent = "Error " + response.status + ": " + (await answer(response)).error; return; }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = { data: [] };
          for (const line of block.split("\n")) {
            if (!line || line.startsWith(":")) continue;
            const at = line.indexOf(":");
            const key = at < 0 ? line : line.slice(0, at);
            const val = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
            if (key === "data") fields.data.push(val); else fields[key] = val;
          }
          if (!fields.data.length || following !== f) continue;
          const data = JSON.parse(fields.data.join("\n"));
          if (fields.event === "cutoff") { f.last = data.resume; break; }
          f.last = Number(fields.id);
          addMatch(f, fields.id, data);
        }
      }
    } catch (e) {
      if (f.abort.signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// ------------------------------------------------------------------ writes

async function remove(id) {
  const response = await call("/queries/" + encodeURIComponent(id), { method: "DELETE" });
  if (response.status !== 204) return say($("registered"), "Error " + response.status + ": " + (await answer(response)).error, false);
  if (following && following.id === id) unfollow();
  say($("registered"), "Deleted query " + id, true);
  refresh();
}

$("register-form").onsubmit = async (event) => {
  event.preventDefault();
  const output = $("output-stream").value.trim();
  const url = "/queries" + (output ? "?output-stream=" + encodeURIComponent(output) : "");
  const response = await call(url, { method: "POST", headers: { "Content-Type": "application/sparql-query" },
                                     body: $("query").value });
  const data = await answer(response);
  if (response.status !== 201) return say($("registered"), "Error " + response.status + ": " + data.error, false);
  say($("registered"), "Registered as query " + data.id + " (streams: " + data.streams.join(", ") + ")", true);
  await refresh();
  follow(data.id);
};

const EXTENSIONS = { trig: "application/trig", nq: "application/n-quads", ttl: "text/turtle", nt: "application/n-triples" };

$("file").onchange = () => {
  const file = $("file").files[0];
  const media = file && EXTENSIONS[file.name.split(".").pop().toLowerCase()];
  if (media) $("format").value = media;
};

$("push-form").onsubmit = async (event) => {
  event.preventDefault();
  const file = $("file").files[0];
  const body = file ? await file.text() : $("events").value;
  let url = "/events?stream=" + encodeURIComponent($("stream").value.trim());
  if ($("time").value.trim()) url += "&time=" + encodeURIComponent($("time").value.trim());
  const response = await call(url, { method: "POST", headers: { "Content-Type": $("format").value }, body });
  const data = await answer(response);
  if (!response.ok) return say($("pushed"), "Error " + response.status + ": " + data.error, false);
  const late = data.late || [];
  const dropped = late.length ? ", " + late.length + " late, dropped by " +
    [...new Set(late.flatMap((e) => e.queries))].join(", ") : "";
  say($("pushed"), data.accepted + " event(s) accepted" + (file ? " from " + file.name : "") + dropped, !late.length);
  refresh();
};

$("sparql-form").onsubmit = async (event) => {
  event.preventDefault();
  const text = $("sparql").value;
  const table = $("results");
  table.tHead.textContent = "";
  table.tBodies[0].textContent = "";
  // an update (INSERT DATA, LOAD...) is sent as one: 204 once applied
  const update = /^\s*((PREFIX|BASE)\b[^\n]*\n\s*)*(INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH)\b/i.test(text);
  const response = await call("/sparql", { method: "POST",
    headers: { "Content-Type": update ? "application/sparql-update" : "application/sparql-query",
               Accept: "application/sparql-results+json, application/n-triples;q=0.9" }, body: text });
  if (!response.ok) return say($("sparql-status"), "Error " + response.status + ": " + (await answer(response)).error, false);
  if (response.status === 204) return say($("sparql-status"), "Update applied", true);
  if (response.status === 201) {  // a SPAseq query sent here registers it
    const data = await response.json();
    say($("sparql-status"), "Registered as query " + data.id, true);
    await refresh();
    return follow(data.id);
  }
  if (!(response.headers.get("content-type") || "").includes("json")) {  // CONSTRUCT, DESCRIBE
    const lines = (await response.text()).split("\n").filter(Boolean);
    say($("sparql-status"), lines.length + " triple(s)", true);
    for (const line of lines) table.tBodies[0].insertRow().appendChild(cell(line));
    return;
  }
  const data = await response.json();
  if ("boolean" in data) return say($("sparql-status"), "ASK: " + data.boolean, true);
  const prefixes = {};
  for (const m of text.matchAll(/PREFIX\s+([\p{L}\p{N}_.-]*):\s*<([^>]*)>/giu)) prefixes[m[1]] = m[2];
  const ptable = prefixTable(prefixes);
  const vars = data.head.vars;
  const head = table.tHead.insertRow();
  for (const v of vars) head.appendChild(Object.assign(document.createElement("th"), { textContent: "?" + v }));
  for (const b of data.results.bindings) {
    const row = table.tBodies[0].insertRow();
    for (const v of vars) row.appendChild(termCell(b[v], ptable));
  }
  say($("sparql-status"), data.results.bindings.length + " result(s)", true);
};

$("token-form").onsubmit = (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
  $("token").value = "";
  $("token-form").hidden = true;
  refresh();
};

$("token-button").onclick = () => askToken("The server's token (writes need it when the server has one).");

poll();
