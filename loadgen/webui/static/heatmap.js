// The live heatmap page: polls data.json every two seconds and draws the hash space of one
// table or index over time on a canvas, with the diagnosis, the hottest keys and the
// throttles. Plain DOM and canvas: nothing is loaded from another host.
"use strict";

const POLL_MS = 2000;
const MARGIN = { left: 64, right: 250, top: 12, bottom: 34 };
const FIELD_NAMES = {
  requests: "key touches/s",
  throttled_attempts: "throttled attempts/s",
  write_units: "write units/s",
  read_units: "read units/s",
};
// Viridis at nine stops (the report's colour map for touches) and a red ramp for throttles.
const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962",
  "#addc30", "#fde725"];
const REDS = ["#f5b7b1", "#e6776c", "#c0392b", "#922b21", "#641e16"];

const $ = (id) => document.getElementById(id);
const state = { scope: null, field: "requests", view: null, grid: null };

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("scope")) state.scope = params.get("scope");
  if (FIELD_NAMES[params.get("field")]) state.field = params.get("field");
}

function writeHash() {
  const params = new URLSearchParams({ scope: state.scope || "", field: state.field });
  history.replaceState(null, "", "#" + params.toString());
}

function rgb(hex) {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

function ramp(stops, x) {
  const t = Math.min(1, Math.max(0, x)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(t));
  const a = rgb(stops[i]);
  const b = rgb(stops[i + 1]);
  const f = t - i;
  return `rgb(${a.map((v, k) => Math.round(v + (b[k] - v) * f)).join(",")})`;
}

function fmt(value, digits = 1) {
  if (value === null || value === undefined) return "-";
  return Number(value).toLocaleString("en-US", { maximumFractionDigits: digits });
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function table(node, head, rows, textColumns = 1) {
  node.replaceChildren();
  const tr = el("tr");
  head.forEach((title, i) => tr.appendChild(el("th", title, i < textColumns ? "text" : "")));
  node.appendChild(tr);
  rows.forEach((cells) => {
    const row = el("tr");
    cells.forEach((cell, i) => row.appendChild(el("td", String(cell), i < textColumns ? "text" : "")));
    node.appendChild(row);
  });
}

function scale(values, field) {
  const positive = values.filter((v) => v > 0);
  if (!positive.length) return null;
  const peak = Math.max(...positive);
  if (field === "throttled_attempts") {
    return { peak, low: 0, color: (v) => ramp(REDS, v / peak), text: `linear, 0 to ${fmt(peak)}` };
  }
  // Touches and units span decades (one hot key against a spread): a log scale shows both.
  const low = Math.max(Math.min(...positive), peak / 100);
  const span = Math.log(peak / low) || 1;
  return {
    peak,
    low,
    color: (v) => ramp(VIRIDIS, peak > low ? Math.log(Math.max(v, low) / low) / span : 1),
    text: peak > low ? `log scale, ${fmt(low, 2)} to ${fmt(peak)}` : `${fmt(peak)}`,
  };
}

function draw() {
  const view = state.view;
  const canvas = $("heatmap");
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const heat = view.heat;
  const grid = (heat.scopes[state.scope] || {})[state.field] || [];
  const rows = grid.length;
  const columns = rows ? grid[0].length : 0;
  const width = canvas.width - MARGIN.left - MARGIN.right;
  const height = canvas.height - MARGIN.top - MARGIN.bottom;
  ctx.fillStyle = "#f4f6f6";
  ctx.fillRect(MARGIN.left, MARGIN.top, width, height);
  const values = grid.flat();
  const colours = scale(values, state.field);
  let cells = 0;
  if (colours) {
    const w = width / columns;
    const h = height / rows;
    grid.forEach((row, r) => {
      row.forEach((value, t) => {
        if (value > 0) {
          ctx.fillStyle = colours.color(value);
          // Row 0 is the bottom of the hash space, as in the report.
          ctx.fillRect(MARGIN.left + t * w, MARGIN.top + height - (r + 1) * h, Math.ceil(w), Math.ceil(h));
          cells += 1;
        }
      });
    });
  }
  // Axes: seconds since the run's first column, and the hash space.
  ctx.strokeStyle = "#566573";
  ctx.strokeRect(MARGIN.left, MARGIN.top, width, height);
  ctx.fillStyle = "#1c2833";
  ctx.font = "12px system-ui, sans-serif";
  const seconds = columns * heat.resolution_s;
  ctx.textAlign = "center";
  for (let i = 0; i <= 5 && columns; i++) {
    const x = MARGIN.left + (width * i) / 5;
    ctx.fillText(`${Math.round((seconds * i) / 5)} s`, x, MARGIN.top + height + 16);
  }
  ctx.fillText("seconds since the first request", MARGIN.left + width / 2, canvas.height - 2);
  ctx.save();
  ctx.translate(16, MARGIN.top + height / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(`hash space (${heat.rows} rows of ${heat.buckets / heat.rows} buckets)`, 0, 0);
  ctx.restore();
  // The hottest keys, named level with their rows (never over the data).
  ctx.textAlign = "left";
  const table = view.tables.find((t) => t.scope === state.scope);
  const placed = [];
  (table ? table.keys : []).slice(0, 6).forEach((key, i) => {
    if (key.bucket === null || (i > 0 && key.share < 0.05)) return;
    const row = Math.floor((key.bucket * heat.rows) / heat.buckets);
    const y = MARGIN.top + height - (row + 0.5) * (height / heat.rows);
    if (placed.some((other) => Math.abs(other - y) < 14)) return;
    placed.push(y);
    ctx.strokeStyle = "#c0392b";
    ctx.beginPath();
    ctx.moveTo(MARGIN.left + width, y);
    ctx.lineTo(MARGIN.left + width + 8, y);
    ctx.stroke();
    const name = key.key.length > 28 ? key.key.slice(0, 27) + "…" : key.key;
    ctx.fillText(`${name} ${Math.round(key.share * 100)}%`, MARGIN.left + width + 12, y + 4);
  });
  canvas.dataset.scope = state.scope || "";
  canvas.dataset.field = state.field;
  canvas.dataset.cells = String(cells);
  canvas.dataset.labels = String(placed.length);
  state.grid = { grid, rows, columns, width, height };
  const what = FIELD_NAMES[state.field];
  const basis = (heat.units_basis[state.scope] || {})[state.field];
  const unitNote = state.field.endsWith("_units")
    ? (view.scale ? ` (at AWS scale: measured / ${view.scale})` : " (as measured: no partition model scale)") +
      (basis === "requests" ? ", counting one unit per index write, the least one costs" : "")
    : "";
  $("legend").textContent = colours
    ? `Colour: ${what}${unitNote}, ${colours.text}. Each column is ${heat.resolution_s} s; ` +
      "a bright horizontal line is one hot key, a band that steps to new heights is a key " +
      "that changes with time, an even wash is a well-spread key."
    : `No ${what.replace("/s", "")} yet on ${state.scope || "any table"}.`;
}

function showDiagnosis(view) {
  const node = $("diagnosis");
  node.replaceChildren(el("h2", "Diagnosis"));
  if (!view.diagnosis.length) {
    node.appendChild(el("p", "Waiting for the first requests…", "note"));
    return;
  }
  view.diagnosis.forEach((finding) => {
    const box = el("div", undefined, finding.kind === "even" ? "finding even" : "finding");
    box.dataset.kind = finding.kind;
    box.appendChild(el("h3", finding.title));
    if (finding.keys.length) {
      const keys = el("p", finding.keys.length > 1 ? "Hot keys: " : "Hot key: ");
      finding.keys.slice(0, 6).forEach((key) => keys.appendChild(el("code", key)));
      box.appendChild(keys);
    }
    box.appendChild(el("p", finding.evidence));
    const remedy = el("p");
    remedy.appendChild(el("b", "Remedy. "));
    remedy.appendChild(document.createTextNode(finding.remedy + " "));
    const guide = el("a", "AWS guide");
    guide.href = finding.guide;
    remedy.appendChild(guide);
    box.appendChild(remedy);
    node.appendChild(box);
  });
}

function showTables(view) {
  const select = $("scope");
  const names = view.tables.map((t) => t.scope);
  if (!state.scope || !names.includes(state.scope)) state.scope = names[0] || null;
  if ([...select.options].map((o) => o.value).join() !== names.join()) {
    select.replaceChildren(...names.map((name) => el("option", name)));
  }
  select.value = state.scope || "";
  $("field").value = state.field;
  const current = view.tables.find((t) => t.scope === state.scope);
  const keys = current ? current.keys : [];
  const headers = ["Partition key", "Share of touches", "Key touches", "Write units/s now*",
    "busiest 5 s*", "Read units/s now*", "busiest 5 s*", "Throttled attempts", "Throttled per touch"];
  table($("keys"), headers, keys.map((key) => [key.key, `${fmt(key.share * 100)}%`,
    fmt(key.touches, 0), fmt(key.write_units_per_s_now), fmt(key.write_units_per_s_peak),
    fmt(key.read_units_per_s_now), fmt(key.read_units_per_s_peak),
    fmt(key.throttled_attempts, 0), fmt(key.throttled_ratio, 3)]));
  table(
    $("throttles"),
    ["Access pattern", "Operation", "Calls", "Throttled attempts", "Throttled per call", "Retries", "Failures"],
    view.throttles.map((r) => [r.name, r.operation, fmt(r.requests, 0), fmt(r.throttled_attempts, 0),
      fmt(r.throttled_ratio, 3), fmt(r.retries, 0), fmt(r.failures, 0)]),
    2,
  );
}

// What the target said of each refusal: throttles by reason and cause, errors with their
// messages and cancelled transactions' reasons, per access pattern.
function showRefusals(said) {
  const count = (n) => fmt(n, 0);
  table($("reasons"), ["Access pattern", "Operation", "Reason", "Table or index", "Cause",
    "Throttled attempts", "Batch items left", "Calls failed"],
  said.throttles.map((t) => [t.pattern, t.operation, t.reason, t.scope, t.cause, count(t.attempts),
    count(t.items), count(t.final)]), 5);
  table($("errors"), ["Access pattern", "Operation", "Error", "Calls", "The target's message"],
    [
      ...said.errors.map((e) => [e.pattern, e.operation, e.code, count(e.count), e.message]),
      ...said.cancellations.map((c) => [c.pattern, c.operation, "cancellation reasons", "",
        Object.entries(c.codes).map(([code, n]) => `${code} x${count(n)}`).join(", ")]),
    ], 3);
  // The message reads left to right, as text does.
  $("errors").querySelectorAll("tr > :last-child").forEach((node) => { node.className = "text"; });
  $("reasons").hidden = !said.throttles.length;
  $("errors").hidden = !(said.errors.length || said.cancellations.length);
  $("refused-nothing").hidden = !$("reasons").hidden || !$("errors").hidden;
  const causes = Object.entries(said.causes).map(([cause, limit]) => `${cause}: ${limit}`).join("; ");
  $("causes").textContent =
    "Reason: DynamoDB's ThrottlingReason (table or index, read or write, and the limit). Cause: " +
    `which limit of the partition model refused, as the emulator tells it (${causes}). Not ` +
    "reported: the target gave none (DynamoDB gives reasons but no cause).";
}

// The running cost a month, as the summary's total line says it: the run's prices' region and
// currency (figures formatted by the server, in that currency), Standard class; measured and
// at launch demand.
function costWords(cost) {
  const t = cost.text;
  const unserved = cost.served && cost.served.served === false
    ? ` The design is not serving its launch (${cost.served.why}): the measured figure is ` +
      "low because DynamoDB refuses its load, not because it is cheaper."
    : "";
  return (
    `So far, a month of this traffic (${cost.month}): on-demand ${t.on_demand_usd}, ` +
    `provisioned ${t.provisioned_usd} (busiest second at 70%), storage ${t.storage_usd}; ` +
    `the tables as run ${t.monthly_usd}. At launch demand: on-demand ` +
    `${t.launch_on_demand_usd}, the tables as run ${t.launch_monthly_usd} ` +
    `(${cost.stamp}; ${cost.currency}, Standard table class).` + unserved
  );
}

function showRun(view) {
  const run = view.run;
  const totals = view.totals;
  $("state").textContent = view.state ? `(${view.state})` : "";
  $("run").textContent =
    `${run.workload}, design ${run.design}, ${run.distribution} over ${run.keys} keys, target ` +
    `${run.target}` + (view.scale ? `, partition model at scale ${view.scale}` : "") +
    ` · ${fmt(totals.requests, 0)} calls, ${fmt(totals.requests_per_s)}/s, ` +
    `${fmt(totals.throttled_attempts, 0)} throttled attempts, ${fmt(totals.failures, 0)} failures`;
  $("cost-section").hidden = !view.cost;
  if (view.cost) $("cost").textContent = costWords(view.cost);
  const load = view.load;
  $("load-section").hidden = !load;
  if (load) {
    $("load").textContent =
      `Launch traffic ${fmt(load.rate, 0)}/s (${load.arrivals} arrivals): offered ` +
      `${fmt(load.offered_per_s)}/s, achieved ${fmt(load.achieved_per_s)}/s, dropped ` +
      `${fmt(load.dropped, 0)}. ` +
      (load.delivered ? "Delivered so far." : `Not delivered so far; bottleneck: ${load.bottleneck}.`);
  }
}

let timer = null;

async function poll() {
  clearTimeout(timer);
  try {
    const params = new URLSearchParams({ field: state.field });
    if (state.scope) params.set("scope", state.scope);
    const response = await fetch(`data.json?${params}`, { cache: "no-store" });
    if (response.ok) {
      const view = await response.json();
      state.view = view;
      showRun(view);
      showDiagnosis(view);
      showTables(view);
      showRefusals(view.refusals);
      if (state.scope && !view.heat.scopes[state.scope]) {
        timer = setTimeout(poll, 0); // the first answer named no table: ask for the one chosen
        return;
      }
      draw();
      writeHash();
      document.body.dataset.updated = String(view.generated_at);
    }
  } catch (error) {
    $("state").textContent = "(no answer from Locust)";
  }
  clearTimeout(timer);
  timer = setTimeout(poll, POLL_MS);
}

function onHover(event) {
  const tip = $("tooltip");
  const g = state.grid;
  const canvas = $("heatmap");
  if (!g || !g.columns) return void (tip.hidden = true);
  const box = canvas.getBoundingClientRect();
  const x = ((event.clientX - box.left) * canvas.width) / box.width - MARGIN.left;
  const y = ((event.clientY - box.top) * canvas.height) / box.height - MARGIN.top;
  if (x < 0 || y < 0 || x >= g.width || y >= g.height) return void (tip.hidden = true);
  const t = Math.floor((x / g.width) * g.columns);
  const r = g.rows - 1 - Math.floor((y / g.height) * g.rows);
  const heat = state.view.heat;
  const per = heat.buckets / heat.rows;
  tip.textContent =
    `${t * heat.resolution_s}–${(t + 1) * heat.resolution_s} s, buckets ${r * per}–${(r + 1) * per - 1}\n` +
    `${fmt(g.grid[r][t], 2)} ${FIELD_NAMES[state.field]}`;
  tip.style.left = `${event.clientX - box.left + 12}px`;
  tip.style.top = `${event.clientY - box.top + 12}px`;
  tip.hidden = false;
}

if (new URLSearchParams(location.search).get("embed")) document.body.classList.add("embed");
readHash();
$("scope").addEventListener("change", (e) => { state.scope = e.target.value; poll(); });
$("field").addEventListener("change", (e) => { state.field = e.target.value; poll(); });
$("heatmap").addEventListener("mousemove", onHover);
$("heatmap").addEventListener("mouseleave", () => { $("tooltip").hidden = true; });
poll();
