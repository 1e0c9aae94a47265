// Under Locust's Partition heat tab: a panel with the diagnosis, what the target said of its
// refusals (throttles by reason and cause, errors with their messages), the live heatmap and
// links to the heatmap page, the run report and the JSON. Locust's UI draws the tab's table
// of hot keys; this script adds the panel outside Locust's own page tree and shows it while
// the tab is open.
"use strict";
(() => {
  const TAB = "partition-heat";
  const base = "./partition-heat/";
  const remembered = "partition-heat-show-heatmap";
  const panel = document.createElement("div");
  panel.id = "partition-heat-panel";
  panel.hidden = true;
  panel.style.cssText =
    "position:fixed;left:0;right:0;bottom:0;z-index:2000;padding:6px 16px;max-height:70vh;" +
    "overflow:auto;background:#fdfefe;color:#1c2833;border-top:3px solid #c0392b;" +
    "box-shadow:0 -2px 8px rgba(0,0,0,.15);font:14px/1.4 system-ui,sans-serif";
  const finding = document.createElement("div");
  finding.id = "partition-heat-diagnosis";
  finding.style.paddingLeft = "8px";
  const links = document.createElement("div");
  links.style.margin = "4px 0";
  const link = (text, href) => {
    const a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    a.style.marginRight = "1.5em";
    links.appendChild(a);
    return a;
  };
  const toggle = link("Hide the heatmap", "#");
  link("Open the live heatmap", base).target = "_blank";
  link("Download report (HTML)", base + "report.html");
  link("Download report (HTML, PNGs)", base + "report.zip");
  link("JSON", base + "data.json");
  // What the target refused, in its words: two small tables side by side.
  const refusals = document.createElement("div");
  refusals.id = "partition-heat-refusals";
  refusals.style.cssText = "display:flex;flex-wrap:wrap;gap:4px 24px;align-items:flex-start;font-size:13px";
  const throttles = document.createElement("table");
  throttles.id = "partition-heat-throttles";
  const errors = document.createElement("table");
  errors.id = "partition-heat-errors";
  const quiet = document.createElement("p");
  quiet.style.margin = "2px 0";
  refusals.append(throttles, errors, quiet);
  const cell = (tag, text, right) => {
    const node = document.createElement(tag);
    node.textContent = text;
    node.style.cssText =
      `padding:1px 8px;border-bottom:1px solid #d5d8dc;vertical-align:top;text-align:${right ? "right" : "left"}`;
    return node;
  };
  const fill = (table, caption, head, rows, numbers) => {
    table.replaceChildren();
    table.hidden = !rows.length;
    table.style.borderCollapse = "collapse";
    const title = document.createElement("caption");
    title.textContent = caption;
    title.style.cssText = "text-align:left;font-weight:600;padding:2px 0";
    table.appendChild(title);
    [head, ...rows].forEach((cells, r) => {
      const tr = document.createElement("tr");
      cells.forEach((text, i) => tr.appendChild(cell(r ? "td" : "th", String(text), numbers.includes(i))));
      table.appendChild(tr);
    });
  };
  const count = (n) => Number(n).toLocaleString("en-US");
  const showRefusals = (said) => {
    fill(
      throttles,
      "Throttles, by what the target said (cause: the partition model's)",
      ["Access pattern", "Reason", "Table or index", "Cause", "Attempts", "Batch items", "Calls failed"],
      said.throttles.map((t) => [t.pattern, t.reason, t.scope, t.cause, count(t.attempts), count(t.items),
        count(t.final)]),
      [4, 5, 6],
    );
    fill(
      errors,
      "Errors, with the target's message",
      ["Access pattern", "Error", "Calls", "Message"],
      [
        ...said.errors.map((e) => [e.pattern, e.code, count(e.count), e.message]),
        ...said.cancellations.map((c) => [c.pattern, "cancellation reasons", "",
          Object.entries(c.codes).map(([code, n]) => `${code} x${count(n)}`).join(", ")]),
      ],
      [2],
    );
    errors.querySelectorAll("td:last-child").forEach((td) => { td.style.maxWidth = "44em"; });
    quiet.textContent = said.throttles.length || said.errors.length ? "" : "No throttles or errors so far.";
    quiet.hidden = !quiet.textContent;
  };

  const frame = document.createElement("iframe");
  frame.id = "partition-heat-heatmap";
  frame.title = "Partition heat: hash buckets over time";
  frame.style.cssText = "width:100%;max-width:1040px;height:470px;border:0;display:block";
  panel.append(finding, links, refusals, frame);
  document.body.appendChild(panel);

  let showHeatmap = localStorage.getItem(remembered) !== "no";
  const layout = () => {
    frame.hidden = !showHeatmap;
    toggle.textContent = showHeatmap ? "Hide the heatmap" : "Show the heatmap";
    if (showHeatmap && !frame.src) frame.src = base + "?embed=1";
    // Keep the end of Locust's table clear of the panel.
    document.body.style.paddingBottom = panel.hidden ? "" : `${panel.offsetHeight}px`;
  };
  toggle.addEventListener("click", (event) => {
    event.preventDefault();
    showHeatmap = !showHeatmap;
    localStorage.setItem(remembered, showHeatmap ? "yes" : "no");
    layout();
  });

  let shown = null;
  async function refresh() {
    const open = new URLSearchParams(location.search).get("tab") === TAB;
    if (panel.hidden === open) {
      panel.hidden = !open;
      layout();
    }
    if (open) {
      try {
        const response = await fetch(base + "data.json?field=", { cache: "no-store" });
        const view = response.ok ? await response.json() : null;
        const first = view && view.diagnosis[0];
        const cost = view && view.cost
          ? ` Cost a month so far (${view.cost.month}): on-demand ${view.cost.text.on_demand_usd}, ` +
            `as run ${view.cost.text.monthly_usd}; at launch demand ` +
            `${view.cost.text.launch_monthly_usd} (${view.cost.stamp}; ${view.cost.currency}).`
          : "";
        const text = (first
          ? `${first.title}. Remedy: ${first.remedy}`
          : view
            ? "Partition heat: waiting for the first requests."
            : `Partition heat: Locust answered ${response.status}.`) + cost;
        if (view) {
          showRefusals(view.refusals);
          layout(); // the tables may have grown: keep Locust's table clear of the panel
        }
        if (text !== shown) {
          finding.textContent = text;
          finding.style.borderLeft = `4px solid ${first && first.kind !== "even" ? "#c0392b" : "#27ae60"}`;
          finding.dataset.kind = first ? first.kind : "";
          shown = text;
          layout();
        }
      } catch (error) {
        finding.textContent = "Partition heat: no answer from Locust.";
      }
    }
    setTimeout(refresh, open ? 2000 : 500);
  }
  refresh();
})();
