"""The review page's stylesheet, inlined into the HTML (no network; its hash goes into the CSP).

Boxes take their colour from the `--c` custom property the script sets (route or engine), so
switching the colouring touches no markup.
"""

APP_CSS = """
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; background: #f4f5f7; }
body { margin: 0; }
header.top { background: #1b1f24; color: #fff; padding: 10px 18px; display: flex; gap: 18px; align-items: baseline; }
header.top h1 { font-size: 18px; margin: 0; }
#run-name { opacity: .8; font-size: 13px; }
section { padding: 8px 18px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #d0d4da; padding: 2px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
#summary .cols { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
#summary .totals { font-size: 14px; margin: 4px 0 8px; }
#summary .note { font-size: 12px; color: #596069; }
button.flagbtn { font: inherit; border: 0; background: none; color: #0b57d0; cursor: pointer; padding: 0; text-decoration: underline; }
#controls { position: sticky; top: 0; z-index: 5; background: #e9ecf0; border-bottom: 1px solid #c9ced6; display: flex;
  flex-wrap: wrap; gap: 10px 16px; align-items: center; font-size: 13px; }
#controls label { display: inline-flex; gap: 4px; align-items: center; }
#controls select { max-width: 220px; }
#legend { display: inline-flex; gap: 8px; flex-wrap: wrap; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 2px solid var(--c); margin-right: 3px; vertical-align: -2px; }
.keys { color: #596069; }
#cards { padding: 8px 18px 40px; display: flex; flex-direction: column; gap: 14px; }
article.card { background: #fff; border: 1px solid #cfd4db; border-left: 6px solid #9aa3ad; border-radius: 4px; padding: 8px 12px; }
article.card { scroll-margin-top: 120px; }
article.card:focus { outline: 3px solid #0b57d0; outline-offset: 2px; }
article.card.status-flagged { border-left-color: #e8a200; }
article.card.status-failed { border-left-color: #c5221f; }
article.card h2 { font-size: 15px; margin: 0 0 6px; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.badge { font-size: 12px; font-weight: 600; border-radius: 3px; padding: 1px 6px; background: #e3e6ea; }
.badge.status-flagged { background: #fde7b0; }
.badge.status-failed { background: #f6c9c6; }
.badge.status-ok { background: #cdebd3; }
.badge.flag { background: #ffe1d6; }
.cardbody { display: grid; grid-template-columns: minmax(260px, 460px) 1fr; gap: 14px; }
.pagebox { position: relative; background: #fff; border: 1px solid #b9c0c9; box-shadow: 0 1px 3px rgba(0,0,0,.12); overflow: hidden; }
.pagebox img { position: absolute; left: 0; top: 0; width: 100%; height: 100%; user-select: none; }
.pagebox .noimg { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; color: #8a929c; font-size: 12px;
  background: repeating-linear-gradient(45deg, #fafbfc, #fafbfc 8px, #f1f3f5 8px, #f1f3f5 16px); }
.box { position: absolute; box-sizing: border-box; border: 2px solid var(--c, #0b57d0); background: transparent; padding: 0; margin: 0;
  cursor: pointer; min-width: 3px; min-height: 3px; }
.box:hover, .box:focus { background: rgba(11, 87, 208, .12); outline: none; }
.box.selected { background: rgba(255, 214, 0, .35); border-width: 3px; }
.box.furniture { border-style: dashed; opacity: .8; }
.hidden-box { position: absolute; box-sizing: border-box; border: 2px dotted #8e24aa; background: rgba(142, 36, 170, .12); cursor: pointer; }
.ink-box { position: absolute; box-sizing: border-box; border: 2px dashed #d50000; outline: 1px solid #fff; pointer-events: none; }
.ocr-region { position: absolute; box-sizing: border-box; border: 1px dotted #2e7d32; pointer-events: none; }
.side { min-width: 0; display: flex; flex-direction: column; gap: 8px; font-size: 13px; }
.side h3 { font-size: 13px; margin: 4px 0 2px; text-transform: uppercase; letter-spacing: .04em; color: #596069; }
details summary { cursor: pointer; color: #33383f; }
details table { margin-top: 4px; }
.side pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; border: 1px solid #e1e4e8; padding: 6px 8px; margin: 0;
  max-height: 320px; overflow: auto; font-size: 12px; }
.detail { background: #fffbe6; border: 1px solid #f0d97a; padding: 6px 8px; }
.detail dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0; }
.detail dt { font-weight: 600; }
.detail dd { margin: 0; }
ul.reasons { margin: 0; padding-left: 18px; }
tr.failed td { background: #fdecea; }
tr.accepted td { background: #e6f4ea; }
.pager { display: inline-flex; gap: 6px; align-items: center; }
.empty { color: #596069; padding: 20px; }
@media (max-width: 900px) { .cardbody { grid-template-columns: 1fr; } }
"""
