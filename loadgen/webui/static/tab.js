// Under Locust's Partition heat tab: a bar with the diagnosis and links to the live heatmap,
// the run report and the JSON. Locust's UI draws the tab's table; this script adds the bar
// outside Locust's own page tree and shows it while the tab is open.
"use strict";
(() => {
  const TAB = "partition-heat";
  const base = "./partition-heat/";
  const bar = document.createElement("div");
  bar.id = "partition-heat-bar";
  bar.hidden = true;
  bar.style.cssText =
    "position:fixed;left:0;right:0;bottom:0;z-index:2000;padding:8px 16px;" +
    "background:#fdfefe;color:#1c2833;border-top:3px solid #c0392b;" +
    "box-shadow:0 -2px 8px rgba(0,0,0,.15);font:14px/1.4 system-ui,sans-serif";
  const finding = document.createElement("div");
  finding.id = "partition-heat-diagnosis";
  const links = document.createElement("div");
  links.style.marginTop = "4px";
  [
    ["Open the live heatmap", base],
    ["Download report (HTML)", base + "report.html"],
    ["Download report (HTML, PNGs)", base + "report.zip"],
    ["JSON", base + "data.json"],
  ].forEach(([text, href]) => {
    const a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    a.style.marginRight = "1.5em";
    if (href === base) a.target = "_blank";
    links.appendChild(a);
  });
  bar.append(finding, links);
  document.body.appendChild(bar);

  let shown = null;
  async function refresh() {
    const open = new URLSearchParams(location.search).get("tab") === TAB;
    bar.hidden = !open;
    if (open) {
      try {
        const response = await fetch(base + "data.json?rows=1&field=requests", { cache: "no-store" });
        const view = response.ok ? await response.json() : null;
        const first = view && view.diagnosis[0];
        const text = first
          ? `${first.title}. Remedy: ${first.remedy}`
          : "Partition heat: waiting for the first requests.";
        if (text !== shown) {
          finding.textContent = text;
          finding.style.borderLeft = first && first.kind !== "even" ? "4px solid #c0392b" : "4px solid #27ae60";
          finding.style.paddingLeft = "8px";
          finding.dataset.kind = first ? first.kind : "";
          shown = text;
        }
      } catch (error) {
        finding.textContent = "Partition heat: no answer from Locust.";
      }
    }
    setTimeout(refresh, open ? 2000 : 500);
  }
  refresh();
})();
