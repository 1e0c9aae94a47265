// Under Locust's Partition heat tab: a panel with the diagnosis, the live heatmap and links to
// the heatmap page, the run report and the JSON. Locust's UI draws the tab's table; this
// script adds the panel outside Locust's own page tree and shows it while the tab is open.
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
  const frame = document.createElement("iframe");
  frame.id = "partition-heat-heatmap";
  frame.title = "Partition heat: hash buckets over time";
  frame.style.cssText = "width:100%;max-width:1040px;height:470px;border:0;display:block";
  panel.append(finding, links, frame);
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
