"""The review page's script, inlined into the HTML (no network; its hash goes into the CSP).

It reads the run from the page's JSON data block and builds every element with
`createElement` and `textContent`: no string the PDF supplied is ever parsed as HTML, and no
link is made from data (image URLs are checked to be data:image URIs or plain relative paths).
Only the cards of the current list page exist in the DOM, so a large run opens as fast as a
small one.
"""

APP_JS = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("review-data").textContent);
  var PAGES = DATA.pages, DOCS = DATA.docs, RUN = DATA.summary;
  var PER_VIEW = DATA.per_view || 20;
  var STATUS_RANK = { flagged: 0, failed: 1, ok: 2 };
  var ROUTE_COLOURS = { text_layer: "#1565c0", ocr: "#2e7d32", mixed: "#00838f", escalation: "#c62828",
    blank: "#757575", failed: "#c5221f" };
  // engine colours: none of the route colours, so switching the colouring always shows
  var PALETTE = ["#6a1b9a", "#ef6c00", "#ad1457", "#4e342e", "#558b2f", "#283593", "#9e9d24", "#37474f",
    "#0277bd", "#f9a825", "#5d4037", "#00695c"];
  var ENGINES = [];
  PAGES.forEach(function (p) { p.blocks.forEach(function (b) { if (ENGINES.indexOf(b.engine) < 0) ENGINES.push(b.engine); }); });
  ENGINES.sort();
  var state = { status: "", route: "", flag: "", engine: "", doc: "", colour: "route", view: 0, focus: -1 };
  var order = PAGES.map(function (_, i) { return i; });
  order.sort(function (a, b) {
    var pa = PAGES[a], pb = PAGES[b];
    return (STATUS_RANK[pa.status] - STATUS_RANK[pb.status]) || (pa.d - pb.d) || (pa.n - pb.n);
  });
  var shown = order;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function fmt(v, digits) {
    if (typeof v !== "number") return v === null || v === undefined ? "" : String(v);
    return Number.isInteger(v) ? String(v) : v.toFixed(digits === undefined ? 3 : digits);
  }
  function row(table, cells, cls) {
    var tr = add(table, el("tr", cls || ""));
    cells.forEach(function (c) {
      var td = add(tr, el("td", typeof c === "number" ? "num" : "", fmt(c)));
      return td;
    });
    return tr;
  }
  function head(table, names) {
    var tr = add(table, el("tr"));
    names.forEach(function (n) { add(tr, el("th", "", n)); });
  }
  function boxColour(b) {
    if (state.colour === "engine") return PALETTE[ENGINES.indexOf(b.engine) % PALETTE.length];
    return ROUTE_COLOURS[b.route] || "#0b57d0";
  }
  // An image URL we wrote: a JPEG/PNG data URI or a plain relative path (no scheme, so never javascript:).
  function safeImage(url) {
    if (typeof url !== "string") return null;
    if (/^data:image\/(jpeg|png);base64,[A-Za-z0-9+\/=]+$/.test(url)) return url;
    if (/^[A-Za-z0-9%._~\-\/]+$/.test(url) && url.indexOf("//") !== 0) return url;
    return null;
  }
  function place(node, bbox, p) {
    node.style.left = (100 * bbox[0] / p.w) + "%";
    node.style.top = (100 * bbox[1] / p.h) + "%";
    node.style.width = (100 * Math.max(bbox[2] - bbox[0], 0) / p.w) + "%";
    node.style.height = (100 * Math.max(bbox[3] - bbox[1], 0) / p.h) + "%";
  }
  function docName(p) { return DOCS[p.d] ? DOCS[p.d].rel : String(p.d); }

  // ------------------------------------------------------------------ summary
  function renderSummary() {
    var s = document.getElementById("summary");
    document.getElementById("run-name").textContent = DATA.title || "";
    var t = add(s, el("p", "totals"));
    t.id = "summary-totals";
    t.textContent = RUN.documents + " document(s), " + RUN.pages + " page(s): " + RUN.status.ok + " ok, " +
      RUN.status.flagged + " flagged, " + RUN.status.failed + " failed; " + fmt(RUN.seconds, 2) +
      " s recorded" + (RUN.usd_per_million === null ? "" : "; about $" + fmt(RUN.usd_per_million, 2) +
      " per million pages");
    var cols = add(s, el("div", "cols"));
    var routes = add(cols, el("table"));
    routes.id = "summary-routes";
    add(routes, el("caption", "", "Pages per route"));
    head(routes, ["route", "pages", "flagged", "failed", "seconds", "s/page"]);
    RUN.routes.forEach(function (r) {
      row(routes, [r.route, r.pages, r.flagged, r.failed, Number(r.seconds.toFixed(3)),
        Number((r.seconds / Math.max(r.pages, 1)).toFixed(4))]);
    });
    var flags = add(cols, el("table"));
    flags.id = "summary-flags";
    add(flags, el("caption", "", "Flags"));
    head(flags, ["flag", "pages"]);
    var names = Object.keys(RUN.flags);
    if (!names.length) row(flags, ["(none)", 0]);
    names.forEach(function (f) {
      var tr = add(flags, el("tr"));
      var b = add(add(tr, el("td")), el("button", "flagbtn", f));
      b.type = "button";
      b.addEventListener("click", function () { setFilter("flag", f); });
      add(tr, el("td", "num", RUN.flags[f]));
    });
    add(s, el("p", "note", "Cost: pagerouter bench's formula at $" + RUN.prices.cpu_core_hour_usd +
      " per CPU core-hour and $" + RUN.prices.gpu_hour_usd + " per GPU-hour, over the seconds the run recorded (" +
      fmt(RUN.cpu_seconds, 2) + " CPU s, " + fmt(RUN.gpu_seconds, 2) +
      " GPU s from VLM attempts): an estimate from the JSON, not measured CPU time."));
  }

  // ------------------------------------------------------------------ filters
  var FILTERS = [["status", "Status"], ["route", "Route"], ["flag", "Flag"], ["engine", "Engine"], ["doc", "Document"]];
  function filterOptions(key) {
    var seen = {}, out = [];
    function put(v, label) { if (!(v in seen)) { seen[v] = 1; out.push([v, label]); } }
    if (key === "doc") DOCS.forEach(function (d, i) { put(String(i), d.rel); });
    else if (key === "engine") ENGINES.forEach(function (e) { put(e, e); });
    else if (key === "status") ["flagged", "failed", "ok"].forEach(function (v) { put(v, v); });
    else PAGES.forEach(function (p) {
      if (key === "route") put(p.route, p.route);
      else p.flags.forEach(function (f) { put(f, f); });
    });
    if (key === "route" || key === "flag") out.sort(function (a, b) { return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0; });
    return out;
  }
  function renderControls() {
    var c = document.getElementById("filters");
    FILTERS.forEach(function (f) {
      var label = add(c, el("label", "", f[1] + " "));
      var sel = add(label, el("select"));
      sel.id = "filter-" + f[0];
      var all = add(sel, el("option", "", "all"));
      all.value = "";
      filterOptions(f[0]).forEach(function (o) { var op = add(sel, el("option", "", o[1])); op.value = o[0]; });
      sel.addEventListener("change", function () { setFilter(f[0], sel.value); });
    });
    ["route", "engine"].forEach(function (mode) {
      var r = document.getElementById("colour-" + mode);
      r.addEventListener("change", function () { if (r.checked) { state.colour = mode; recolour(); } });
    });
    document.getElementById("prev").addEventListener("click", function () { go(state.view - 1); });
    document.getElementById("next").addEventListener("click", function () { go(state.view + 1); });
    document.addEventListener("keydown", onKey);
  }
  function setFilter(key, value) {
    state[key] = value;
    var sel = document.getElementById("filter-" + key);
    if (sel) sel.value = value;
    applyFilters();
  }
  function applyFilters() {
    shown = order.filter(function (i) {
      var p = PAGES[i];
      if (state.status && p.status !== state.status) return false;
      if (state.route && p.route !== state.route) return false;
      if (state.flag && p.flags.indexOf(state.flag) < 0) return false;
      if (state.engine && p.engines.indexOf(state.engine) < 0) return false;
      if (state.doc !== "" && String(p.d) !== state.doc) return false;
      return true;
    });
    state.view = 0;
    state.focus = -1;
    renderCards();
  }
  function recolour() {
    var legend = document.getElementById("legend");
    legend.replaceChildren();
    var keys = state.colour === "engine" ? ENGINES : Object.keys(ROUTE_COLOURS);
    keys.forEach(function (k) {
      var item = add(legend, el("span"));
      var sw = add(item, el("span", "swatch"));
      sw.style.setProperty("--c", state.colour === "engine" ? PALETTE[ENGINES.indexOf(k) % PALETTE.length] : ROUTE_COLOURS[k]);
      add(item, document.createTextNode(k));
    });
    var boxes = document.querySelectorAll("#cards .box");
    for (var i = 0; i < boxes.length; i++) {
      var parts = boxes[i].getAttribute("data-block").split(":");
      var card = boxes[i].closest("article");
      var p = PAGES[Number(card.getAttribute("data-index"))];
      boxes[i].style.setProperty("--c", boxColour(p.blocks[Number(parts[1])]));
    }
  }

  // ------------------------------------------------------------------ cards
  function go(view) {
    var last = Math.max(Math.ceil(shown.length / PER_VIEW) - 1, 0);
    state.view = Math.min(Math.max(view, 0), last);
    renderCards();
  }
  function renderCards() {
    var cards = document.getElementById("cards");
    cards.replaceChildren();
    var start = state.view * PER_VIEW, end = Math.min(start + PER_VIEW, shown.length);
    document.getElementById("position").textContent = shown.length ?
      "pages " + (start + 1) + "\u2013" + end + " of " + shown.length +
      (shown.length !== PAGES.length ? " (filtered from " + PAGES.length + ")" : "") : "no page matches";
    document.getElementById("prev").disabled = state.view === 0;
    document.getElementById("next").disabled = end >= shown.length;
    if (!shown.length) add(cards, el("p", "empty", "No page matches these filters."));
    for (var k = start; k < end; k++) add(cards, card(shown[k], k));
    document.body.setAttribute("data-rendered", String(end - start));
  }
  function card(index, position) {
    var p = PAGES[index];
    var a = el("article", "card status-" + p.status);
    a.tabIndex = 0;
    a.id = "card-" + p.d + "-" + p.n;
    a.setAttribute("data-index", String(index));
    a.setAttribute("data-position", String(position));
    a.setAttribute("data-doc", String(p.d));
    a.setAttribute("data-page", String(p.n));
    a.setAttribute("data-status", p.status);
    a.setAttribute("data-route", p.route);
    a.setAttribute("aria-label", docName(p) + " page " + p.n + ", " + p.status + ", route " + p.route);
    var h = add(a, el("h2"));
    add(h, el("span", "title", docName(p) + " \u00b7 page " + p.n));
    add(h, el("span", "badge status-" + p.status, p.status));
    add(h, el("span", "badge route", p.route));
    p.flags.forEach(function (f) { add(h, el("span", "badge flag", f)); });
    add(h, el("span", "badge", fmt(p.seconds, 3) + " s"));
    if (p.rotation) add(h, el("span", "badge", "turned " + p.rotation + "\u00b0"));
    var body = add(a, el("div", "cardbody"));
    body.appendChild(pageView(p, a));
    body.appendChild(sidePanel(p));
    return a;
  }
  function pageView(p, cardNode) {
    var wrap = el("div", "pagewrap");
    var box = add(wrap, el("div", "pagebox"));
    var width = 440, ratio = p.w > 0 && p.h > 0 ? p.h / p.w : 1.414;
    box.style.width = width + "px";
    box.style.height = Math.round(width * ratio) + "px";
    var url = safeImage(p.image);
    if (url) {
      var img = add(box, el("img"));
      img.alt = "page " + p.n;
      img.loading = "lazy";
      img.decoding = "async";
      img.src = url;
    } else {
      add(box, el("div", "noimg", "no page image (pagerouter review --pdf-dir DIR renders them)"));
    }
    if (!(p.w > 0 && p.h > 0)) return wrap;
    (p.triage ? p.triage.ocr_regions : []).forEach(function (r, i) {
      var o = add(box, el("div", "ocr-region"));
      o.setAttribute("data-ocr-region", p.n + ":" + i);
      o.title = "OCR region";
      place(o, r, p);
    });
    p.hidden.forEach(function (t, i) {
      var hb = add(box, el("div", "hidden-box"));
      hb.setAttribute("data-hidden", p.n + ":" + i);
      hb.title = "hidden text: " + t.reason;
      place(hb, t.bbox, p);
      hb.addEventListener("click", function () { showHidden(cardNode, p, i); });
    });
    p.blocks.forEach(function (b, i) {
      var bt = add(box, el("button", "box" + (b.furniture ? " furniture" : "")));
      bt.type = "button";
      bt.setAttribute("data-block", p.n + ":" + i);
      bt.setAttribute("data-engine", b.engine);
      bt.setAttribute("data-route", b.route);
      bt.setAttribute("aria-label", "block " + i + ": " + b.role + " by " + b.engine);
      bt.title = b.role + " \u00b7 " + b.engine;
      bt.style.setProperty("--c", boxColour(b));
      place(bt, b.bbox, p);
      bt.addEventListener("click", function () { showBlock(cardNode, p, i); });
    });
    p.ink.forEach(function (r, i) {
      var ib = add(box, el("div", "ink-box"));
      ib.setAttribute("data-ink", p.n + ":" + i);
      ib.title = "ink no block accounts for";
      place(ib, r, p);
    });
    return wrap;
  }
  function dl(parent, pairs) {
    var d = add(parent, el("dl"));
    pairs.forEach(function (kv) {
      add(d, el("dt", "", kv[0]));
      var dd = add(d, el("dd", kv[2] || "", kv[1]));
      return dd;
    });
    return d;
  }
  function showBlock(cardNode, p, i) {
    var b = p.blocks[i];
    var prev = cardNode.querySelectorAll(".box.selected");
    for (var k = 0; k < prev.length; k++) prev[k].classList.remove("selected");
    var sel = cardNode.querySelector('.box[data-block="' + p.n + ":" + i + '"]');
    if (sel) sel.classList.add("selected");
    var d = cardNode.querySelector(".detail");
    d.replaceChildren();
    add(d, el("h3", "", "Block " + i));
    dl(d, [["role", b.role, "detail-role"], ["engine", b.engine + (b.engine_version ? " (" + b.engine_version + ")" : ""), "detail-engine"],
      ["route", b.route, "detail-route"], ["confidence", fmt(b.confidence, 4), "detail-confidence"],
      ["order", b.order, "detail-order"], ["box", b.bbox.map(function (v) { return fmt(v, 1); }).join(", "), "detail-bbox"]]
      .concat(b.witnesses.length ? [["witnesses", b.witnesses.join(", "), "detail-witnesses"]] : [])
      .concat(b.furniture ? [["furniture", b.furniture_reasons.join("; ") || "yes", "detail-furniture"]] : []));
    add(d, el("pre", "detail-text", b.text));
    var att = p.attempts;
    add(d, el("p", "detail-attempts", att.length ? att.length + " VLM attempt(s) at this page, " +
      att.filter(function (x) { return x.accepted; }).length + " accepted (see the ladder below)" :
      "No VLM attempts at this page."));
  }
  function showHidden(cardNode, p, i) {
    var t = p.hidden[i];
    var d = cardNode.querySelector(".detail");
    d.replaceChildren();
    add(d, el("h3", "", "Hidden text " + i + " (left out of the output)"));
    dl(d, [["why", t.reason, "detail-reason"]]);
    add(d, el("pre", "detail-text", t.text));
  }
  function sidePanel(p) {
    var s = el("div", "side");
    var detail = add(s, el("div", "detail"));
    add(detail, el("p", "", p.blocks.length ? "Click a box to see its text, role, engine, confidence and attempts." :
      "This page has no blocks."));
    if (p.error) { add(s, el("h3", "", "Error")); add(s, el("pre", "error", p.error)); }
    add(s, el("h3", "", "Markdown"));
    add(s, el("pre", "markdown", p.markdown || "(empty)"));
    if (p.triage) {
      add(s, el("h3", "", "Triage: " + p.triage.route + (p.triage.script ? " (" + p.triage.script + ")" : "")));
      var ul = add(s, el("ul", "reasons triage-reasons"));
      p.triage.reasons.forEach(function (r) { add(ul, el("li", "", r)); });
      var names = Object.keys(p.triage.scores);
      var sd = add(s, el("details", "scores"));
      sd.open = p.status !== "ok";
      add(sd, el("summary", "", "Triage scores (" + names.length + ")"));
      var sc = add(sd, el("table"));
      head(sc, ["score", "value"]);
      names.forEach(function (k) { row(sc, [k, p.triage.scores[k]]); });
    }
    if (p.checks.length) {
      var failed = p.checks.filter(function (c) { return !c.passed; });
      add(s, el("h3", "", "Checks: " + failed.length + " of " + p.checks.length + " failed"));
      var cd = add(s, el("details", "checks"));
      cd.open = failed.length > 0;
      add(cd, el("summary", "", failed.length ? failed.map(function (c) { return c.name; }).join(", ") : "all passed"));
      var ct = add(cd, el("table"));
      head(ct, ["check", "passed", "score", "threshold", "reason"]);
      p.checks.slice().sort(function (a, b) { return a.passed - b.passed; }).forEach(function (c) {
        row(ct, [c.name, c.passed ? "yes" : "NO", c.score, c.threshold === null ? "" : c.threshold, c.reason],
          c.passed ? "" : "failed");
      });
    }
    if (p.attempts.length) {
      add(s, el("h3", "", "VLM ladder"));
      var at = add(s, el("table", "ladder"));
      head(at, ["#", "tier", "engine", "region", "temp", "rot", "finish", "s", "kept", "rejected because"]);
      p.attempts.forEach(function (x) {
        row(at, [x.number, x.tier, x.engine, x.region === null ? "page" : x.region, x.temperature, x.rotation,
          x.finish_reason, x.seconds, x.accepted ? "yes" : "no", x.rejected_because.join("; ")], x.accepted ? "accepted" : "");
      });
    }
    if (p.hidden.length) {
      add(s, el("h3", "", "Hidden text (" + p.hidden.length + ", not in the output)"));
      var hl = add(s, el("ul", "reasons hidden-list"));
      p.hidden.forEach(function (t) { add(hl, el("li", "", t.text + " \u2014 " + t.reason)); });
    }
    if (Object.keys(p.timings).length) {
      add(s, el("h3", "", "Seconds"));
      add(s, el("p", "timings", Object.keys(p.timings).map(function (k) { return k + " " + fmt(p.timings[k], 3); }).join(", ")));
    }
    return s;
  }

  // ------------------------------------------------------------------ keyboard
  function needsLook(position) { return PAGES[shown[position]].status !== "ok"; }
  function focusPosition(position) {
    var view = Math.floor(position / PER_VIEW);
    if (view !== state.view) { state.view = view; renderCards(); }
    state.focus = position;
    var node = document.querySelector('article[data-position="' + position + '"]');
    if (node) { node.focus({ preventScroll: true }); node.scrollIntoView({ block: "start" }); }
  }
  function step(dir) {
    var from = state.focus;
    var active = document.activeElement && document.activeElement.closest ? document.activeElement.closest("article") : null;
    if (active) from = Number(active.getAttribute("data-position"));
    for (var k = from + dir; k >= 0 && k < shown.length; k += dir) {
      if (needsLook(k)) { focusPosition(k); return; }
    }
  }
  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var t = e.target && e.target.tagName;
    if (t === "SELECT" || t === "INPUT" || t === "TEXTAREA") return;
    if (e.key === "j" || e.key === "n") { step(1); e.preventDefault(); }
    else if (e.key === "k" || e.key === "p") { step(-1); e.preventDefault(); }
    else if (e.key === "]") { go(state.view + 1); e.preventDefault(); }
    else if (e.key === "[") { go(state.view - 1); e.preventDefault(); }
  }

  renderSummary();
  renderControls();
  recolour();
  applyFilters();
  document.body.setAttribute("data-ready", "1");
  if (window.performance && performance.mark) performance.mark("pagerouter-review-ready");  // benchmarks/bench_review.py
})();
"""
