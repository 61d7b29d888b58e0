/** The report's stylesheet: light and dark (prefers-color-scheme), A4 and Letter print, no web fonts. */
export const REPORT_CSS = `
:root{--bg:#fff;--fg:#1b1f24;--muted:#5b6470;--line:#d5dae1;--card:#f6f8fa;--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;
--c0:#0969da;--c1:#d1242f;--c2:#1a7f37;--c3:#8250df;--c4:#bc4c00;--c5:#0a7e8c;--wait:#9ab8e8;--decode:#0969da;--warmreq:#b8bec6;
--thr:rgba(207,34,46,.16);--cap:rgba(191,135,0,.14);color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--card:#161b22;--pass:#3fb950;
--warn:#d29922;--fail:#f85149;--c0:#4493f8;--c1:#f85149;--c2:#3fb950;--c3:#a371f7;--c4:#db6d28;--c5:#39c5cf;--wait:#2f4a70;
--decode:#4493f8;--warmreq:#484f58;--thr:rgba(248,81,73,.2);--cap:rgba(210,153,34,.16)}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1180px;padding:20px 24px 48px;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px}
.sub{color:var(--muted);margin:0 0 12px}
.sim-stamp{position:fixed;top:0;right:0;z-index:10;background:var(--fail);color:#fff;font-weight:700;letter-spacing:.08em;
padding:3px 10px;font-size:12px;border-bottom-left-radius:6px}
.sim-banner{border:2px solid var(--fail);color:var(--fail);font-weight:700;padding:8px 12px;border-radius:6px;margin:8px 0 14px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:6px 18px;background:var(--card);
border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.facts div{min-width:0;overflow-wrap:anywhere}.facts b{display:block;font-size:11px;text-transform:uppercase;color:var(--muted);letter-spacing:.04em}
.verdict.pass{color:var(--pass)}.verdict.warn{color:var(--warn)}.verdict.fail{color:var(--fail)}
table{border-collapse:collapse;width:100%;font-size:12.5px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:right;vertical-align:top}
th{font-weight:600;background:var(--card)}th small{display:block;font-weight:400;color:var(--muted)}
td.t,th.t{text-align:left}td.nw{white-space:nowrap}
.status{font-weight:700;font-size:11px;padding:1px 6px;border-radius:4px;border:1px solid currentColor;white-space:nowrap}
.status.pass{color:var(--pass)}.status.warn{color:var(--warn)}.status.fail{color:var(--fail)}.status.info{color:var(--muted)}
.msg-time{font-variant-numeric:tabular-nums;color:var(--muted)}
ul.checks{list-style:none;padding:0;margin:0}ul.checks li{padding:4px 0;border-bottom:1px solid var(--line)}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(400px,1fr));gap:16px}
figure.chart{margin:0;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 10px;break-inside:avoid}
figure.wide{grid-column:1/-1;margin-top:16px}
figcaption{font-weight:600;margin-bottom:4px}
svg{width:100%;height:auto;display:block;overflow:visible}
svg text{fill:var(--muted);font-size:12px}svg text.panel{fill:var(--fg);font-weight:600}svg text.pt{fill:var(--fg);font-size:10px}
svg .slo-band{fill:var(--c2);opacity:.12}svg .grid{stroke:var(--line);stroke-width:.6}svg .axis{stroke:var(--muted);stroke-width:1}
svg .level{stroke:var(--muted);stroke-dasharray:3 3;stroke-width:.8}
svg .line{fill:none;stroke-width:2}svg .dashed .line{stroke-dasharray:6 4}svg .whisker{fill:none;stroke-width:1.2}
svg .gpu{stroke-width:1.4}
svg g circle.slo-meets{fill:var(--pass);stroke:var(--bg);stroke-width:1}svg g circle.slo-fails{fill:var(--bg);stroke:var(--fail);stroke-width:2}
svg g circle.slo-uncertain{fill:var(--bg);stroke:var(--warn);stroke-width:2;stroke-dasharray:2 1.5}
svg g circle.capacity-ring{fill:none;stroke:var(--fg);stroke-width:1.5}svg text.pt.cap{font-weight:700}svg .leader{stroke:var(--fg);stroke-width:.8}
.key.slo-meets i,.key.slo-fails i,.key.slo-uncertain i,.key.capacity-ring i{width:9px;height:9px;border-radius:50%}
.key.slo-meets i{background:var(--pass)}.key.slo-fails i{background:none;border:2px solid var(--fail)}
.key.slo-uncertain i{background:none;border:2px dashed var(--warn)}.key.capacity-ring i{background:none;border:1.5px solid var(--fg);width:12px;height:12px}
${[0, 1, 2, 3, 4, 5].map((i) => `svg .c${i} .line,svg .c${i}.line,svg .c${i} .whisker{stroke:var(--c${i})}svg .c${i} circle{fill:var(--c${i})}.key.c${i} i{background:var(--c${i})}.key.dashed.c${i} i{background:repeating-linear-gradient(90deg,var(--c${i}) 0 5px,transparent 5px 8px)}`).join('')}
svg .req{fill:none}svg .req.wait{stroke:var(--wait)}svg .req.decode{stroke:var(--decode)}svg .req.warm{stroke:var(--warmreq)}
svg .req.failed{stroke:var(--fail)}svg .req.cancelled{stroke:var(--warn);stroke-dasharray:4 2}svg .span.throttled{fill:var(--thr)}svg .span.power-cap{fill:var(--cap)}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--muted);margin-top:4px}
.key i{display:inline-block;width:14px;height:3px;vertical-align:middle;margin-right:5px;background:var(--muted)}
.key.wait i{background:var(--wait)}.key.decode i{background:var(--decode)}.key.warm i{background:var(--warmreq)}
.key.failed i{background:var(--fail)}.key.cancelled i{background:var(--warn)}.key.throttled i{background:var(--thr);height:10px}.key.power-cap i{background:var(--cap);height:10px}
#timeline-panels{display:flex;flex-direction:column;gap:6px}#timeline-panels .panel-title{font-size:12px;font-weight:600;margin:2px 0}
#timeline-panels .panel{position:relative}#timeline-panels .u-legend{position:absolute;top:0;right:0;font-size:11px;text-align:right;margin:0;width:auto}#timeline-panels .u-legend .u-series:first-child{display:none}
#timeline-panels .u-legend .u-series{padding:0 6px}.key.band i{height:10px;outline:1px solid var(--line)}
.note,.empty{color:var(--muted);font-size:12px;margin:4px 0 0}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 10px;white-space:pre-wrap;
overflow-wrap:anywhere;font-size:12px}
footer{margin-top:28px;color:var(--muted);font-size:12px}
@page{margin:16mm 10mm 12mm}
@media print{
:root{--bg:#fff;--fg:#000;--muted:#444;--line:#ccc;--card:#fff}
body{max-width:none;padding:0;font-size:10.5pt}
.charts{grid-template-columns:1fr 1fr;gap:8px}figure.chart{padding:4px 6px}
table{font-size:8pt}th,td{padding:2px 3px}
h2{break-after:avoid}tr,li,figure{break-inside:avoid}
.sim-stamp{position:fixed;top:42%;left:0;right:0;text-align:center;background:none;color:rgba(207,34,46,.13);font-size:72pt;letter-spacing:.06em;transform:rotate(-32deg);pointer-events:none;border-radius:0;padding:0}
}
`;
