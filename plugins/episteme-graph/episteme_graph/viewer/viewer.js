"use strict";
// episteme-graph viewer: a dependency-free SVG view of one embedded graph, drawn where the embedded
// layout (computed by layout.py, the same the SVG export draws) puts it. Every piece of graph text
// enters the page through textContent or an attribute value, never as markup; nothing is fetched.
// Graph ids are data: every table keyed by an id is a Map (an id "constructor" or "__proto__" is
// just a string here).
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  function parse(id) {
    var value = JSON.parse(document.getElementById(id).textContent);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  }
  var graph = parse("graph-data"), plan = parse("graph-layout");
  var C = plan.constants || {};
  var ARROW = C.arrow, HULL_PAD = C.hullPad, LOOP = C.loop, LANE = C.lane, LANE_MIN = C.laneMin, LABEL_GAP = C.labelGap, FONT_SIZE = C.fontSize, LINE_HEIGHT = C.lineHeight;

  function str(v, fallback) { return typeof v === "string" ? v : (fallback === undefined ? "" : fallback); }
  function list(v) { return Array.isArray(v) ? v : []; }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    var keys = Object.keys(attrs || {});
    for (var i = 0; i < keys.length; i++) { e.setAttribute(keys[i], String(attrs[keys[i]])); }
    return e;
  }
  function safeUrl(u) {
    if (typeof u !== "string" || u.trim() !== u) { return null; }
    try {
      var p = new URL(u);
      if ((p.protocol !== "http:" && p.protocol !== "https:") || p.username || p.password) { return null; }
      var bad = /^(accesskey|apikey|auth|authorization|awsaccesskeyid|clientsecret|credential|jwt|password|passwd|secret|secretkey|sessionid|sig|signature|token)$|(token|apikey|secret|password|credential|signature)$/;
      var found = false;
      p.searchParams.forEach(function (_v, k) { if (bad.test(k.toLowerCase().replace(/[^a-z0-9]/g, ""))) { found = true; } });
      return found ? null : p.href;
    } catch (e) { return null; }
  }

  // -- geometry: the same functions as layout.py (edge_path, hull_points, title_position, fmt) -------
  function fmt(v) {
    var n = Math.floor(v * 10 + 0.5), sign = n < 0 ? "-" : "", a = Math.abs(n), whole = Math.floor(a / 10), tenth = a - whole * 10;
    return sign + String(whole) + (tenth ? "." + String(tenth) : "");
  }
  function edgePath(sx, sy, sr, tx, ty, tr, lane, both) {
    var dx = tx - sx, dy = ty - sy, d = Math.sqrt(dx * dx + dy * dy), head = ARROW + 1, lead = both ? head : 1;
    if (d < 0.5) {
      var s = LOOP + lane * LOOP / 2;
      return "M" + fmt(sx - 0.6 * sr) + " " + fmt(sy - 0.8 * sr) +
        "C" + fmt(sx - sr - s) + " " + fmt(sy - sr - 1.6 * s) + " " + fmt(sx + sr + s) + " " + fmt(sy - sr - 1.6 * s) + " " +
        fmt(sx + 0.6 * (sr + head)) + " " + fmt(sy - 0.8 * (sr + head));
    }
    if (lane === 0) {
      var ux = dx / d, uy = dy / d;
      return "M" + fmt(sx + ux * (sr + lead)) + " " + fmt(sy + uy * (sr + lead)) +
        "L" + fmt(tx - ux * (tr + head)) + " " + fmt(ty - uy * (tr + head));
    }
    var bend = lane * Math.max(LANE_MIN, LANE * d);
    var cx = (sx + tx) / 2 - dy / d * bend, cy = (sy + ty) / 2 + dx / d * bend;
    var ax = cx - sx, ay = cy - sy, la = Math.sqrt(ax * ax + ay * ay);
    var bx = tx - cx, by = ty - cy, lb = Math.sqrt(bx * bx + by * by);
    return "M" + fmt(sx + ax / la * (sr + lead)) + " " + fmt(sy + ay / la * (sr + lead)) +
      "Q" + fmt(cx) + " " + fmt(cy) + " " + fmt(tx - bx / lb * (tr + head)) + " " + fmt(ty - by / lb * (tr + head));
  }
  function cross(o, a, b) { return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]); }
  function hullPoints(members) {
    var points = [];
    members.forEach(function (n) {
      var x0 = n.x + n.box[0] - HULL_PAD, x1 = n.x + n.box[2] + HULL_PAD, y0 = n.y + n.box[1] - HULL_PAD, y1 = n.y + n.box[3] + HULL_PAD;
      points.push([x0, y0], [x1, y0], [x1, y1], [x0, y1]);
    });
    points.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    if (points.length < 3) { return points; }
    var lower = [], upper = [], i;
    for (i = 0; i < points.length; i++) {
      while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], points[i]) <= 0) { lower.pop(); }
      lower.push(points[i]);
    }
    for (i = points.length - 1; i >= 0; i--) {
      while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], points[i]) <= 0) { upper.pop(); }
      upper.push(points[i]);
    }
    return lower.slice(0, -1).concat(upper.slice(0, -1));
  }
  function hullPath(members) {
    var points = hullPoints(members);
    return points.length ? "M" + points.map(function (p) { return fmt(p[0]) + " " + fmt(p[1]); }).join("L") + "Z" : "";
  }
  function titlePosition(members) {
    var x = Infinity, y = Infinity;
    members.forEach(function (n) { x = Math.min(x, n.x + n.box[0]); y = Math.min(y, n.y + n.box[1]); });
    return [x - HULL_PAD, y - HULL_PAD - 6];
  }

  // -- the model: drawn nodes, clusters and edges as the layout lists them ---------------------------
  var meta = graph.metadata && typeof graph.metadata === "object" ? graph.metadata : {};
  var records = new Map();  // node id -> the graph's node (the first of an id)
  list(graph.nodes).forEach(function (n) {
    if (n && typeof n === "object" && typeof n.id === "string" && !records.has(n.id)) { records.set(n.id, n); }
  });
  var places = new Map();  // node id -> its place (x and y change while it is dragged)
  var nodes = [];
  list(plan.nodes).forEach(function (p) {
    if (records.has(p.id) && !places.has(p.id)) { places.set(p.id, p); nodes.push(p); }
  });
  var clusters = list(plan.clusters), types = list(plan.types);
  var rawEdges = list(graph.edges);
  var edges = list(plan.edges).filter(function (e) { return places.has(e.source) && places.has(e.target) && types[e.type]; });
  var members = clusters.map(function () { return []; });
  nodes.forEach(function (p) { if (members[p.cluster]) { members[p.cluster].push(p); } });
  var touching = new Map();  // node id -> indices (into edges) of its edges
  nodes.forEach(function (p) { touching.set(p.id, []); });
  edges.forEach(function (e, i) {
    touching.get(e.source).push(i);
    if (e.target !== e.source) { touching.get(e.target).push(i); }
  });
  function label(id) { var n = records.get(id); return str(n && n.label) || id; }
  function edgeRecord(e) { var r = rawEdges[e.index]; return r && typeof r === "object" ? r : {}; }

  // -- header and footer ----------------------------------------------------------------------------
  document.getElementById("title").textContent = str(meta.title, "Untitled graph");
  var score = typeof meta.conformance_score === "number" ? meta.conformance_score : meta.quality_score;
  var realClusters = clusters.filter(function (c) { return c.id !== null; }).length;
  document.getElementById("meta").textContent = nodes.length + " concepts · " + edges.length + " relationships · " +
    realClusters + " clusters · conformance " + (typeof score === "number" ? score : "?") + "/100" +
    (meta.domain ? " · " + str(meta.domain) : "") + (meta.distillation_date ? " · " + str(meta.distillation_date) : "");
  document.getElementById("footer").textContent = "Semantic accuracy was not evaluated: a valid graph is well formed, not true.";

  // -- drawing --------------------------------------------------------------------------------------
  var canvas = document.getElementById("canvas"), viewport = document.getElementById("viewport");
  var markerDefs = document.getElementById("markers");
  var hullLayer = document.getElementById("hulls"), edgeLayer = document.getElementById("edges"), nodeLayer = document.getElementById("nodes");
  types.forEach(function (t, k) {
    var m = svg("marker", { id: "arrow-" + k, viewBox: "0 0 10 10", refX: 0, refY: 5, markerWidth: ARROW, markerHeight: ARROW,
      markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
    m.appendChild(svg("path", { d: "M0 0L10 5L0 10Z", fill: t.color }));
    markerDefs.appendChild(m);
  });
  var hullEls = clusters.map(function (c, k) {
    if (!members[k].length) { return null; }
    var g = svg("g", { "class": "cluster" + (c.id === null ? " unclustered" : ""), "data-cluster-index": k });
    var path = svg("path", { "class": "hull", fill: c.color, stroke: c.color });
    var title = svg("text", { "class": "cluster-title" });
    title.textContent = str(c.title);
    g.appendChild(path); g.appendChild(title); hullLayer.appendChild(g);
    return { group: g, path: path, title: title };
  });
  function drawHull(k) {
    var h = hullEls[k];
    if (!h) { return; }
    h.path.setAttribute("d", hullPath(members[k]));
    var at = titlePosition(members[k]);
    h.title.setAttribute("x", fmt(at[0])); h.title.setAttribute("y", fmt(at[1]));
  }
  var edgeEls = edges.map(function (e) {
    var t = types[e.type], markers = { "marker-end": "url(#arrow-" + e.type + ")" };
    var line = svg("path", { "class": "edge" + (e.both ? " tension" : ""), "data-edge": e.index, stroke: t.color, "stroke-width": fmt(e.width) });
    line.setAttribute("data-type", t.name);
    line.setAttribute("marker-end", markers["marker-end"]);
    if (e.both) { line.setAttribute("marker-start", markers["marker-end"]); }
    var hit = svg("path", { "class": "edge-hit", "data-edge": e.index });
    edgeLayer.appendChild(line); edgeLayer.appendChild(hit);
    return { line: line, hit: hit };
  });
  function drawEdge(i) {
    var e = edges[i], a = places.get(e.source), b = places.get(e.target);
    var d = edgePath(a.x, a.y, a.r, b.x, b.y, b.r, e.lane, e.both);
    edgeEls[i].line.setAttribute("d", d); edgeEls[i].hit.setAttribute("d", d);
  }
  var nodeEls = new Map();
  nodes.forEach(function (p) {
    var g = svg("g", { "class": "node" + (p.superseded ? " superseded" : ""), tabindex: 0, role: "button" });
    g.setAttribute("data-id", p.id);
    g.setAttribute("aria-label", label(p.id));
    var tip = svg("title"); tip.textContent = label(p.id); g.appendChild(tip);
    var cluster = clusters[p.cluster];
    g.appendChild(svg("circle", { r: fmt(p.r), fill: cluster ? cluster.color : "#9aa3ad" }));
    var text = svg("text", { "class": "label" });
    var first = p.r + LABEL_GAP + FONT_SIZE;
    list(p.lines).forEach(function (line, i) {
      var span = svg("tspan", { x: 0, y: fmt(first + i * LINE_HEIGHT) });
      span.textContent = str(line);
      text.appendChild(span);
    });
    g.appendChild(text);
    nodeLayer.appendChild(g);
    nodeEls.set(p.id, g);
  });
  function drawNode(p) { nodeEls.get(p.id).setAttribute("transform", "translate(" + fmt(p.x) + "," + fmt(p.y) + ")"); }
  nodes.forEach(drawNode);
  edges.forEach(function (_e, i) { drawEdge(i); });
  clusters.forEach(function (_c, k) { drawHull(k); });

  // -- the view: fitted to the canvas at first; zoom, pan ------------------------------------------
  var view = { x: 0, y: 0, k: 1 }, fitted = { x: 0, y: 0, k: 1 };
  function applyView() { viewport.setAttribute("transform", "translate(" + view.x.toFixed(2) + "," + view.y.toFixed(2) + ") scale(" + view.k.toFixed(4) + ")"); }
  function canvasSize() { return [Math.max(canvas.clientWidth || 800, 200), Math.max(canvas.clientHeight || 600, 150)]; }
  var minK = 0.2, maxK = 4;
  function fit() {  // called once the legend is built, which takes its share of the height
    var size = canvasSize(), w = Math.max(plan.width || 1, 1), h = Math.max(plan.height || 1, 1);
    var k = Math.min(size[0] / w, size[1] / h, 1.25);
    fitted = { x: (size[0] - w * k) / 2, y: (size[1] - h * k) / 2, k: k };
    view = { x: fitted.x, y: fitted.y, k: fitted.k };
    minK = Math.min(0.2, k / 2);
    applyView();
  }

  // -- details: statements, citations, backlinks ----------------------------------------------------
  var details = document.getElementById("details"), selected = null;
  function linkTo(id) {
    var b = el("button", label(id), "link");
    b.type = "button";
    b.addEventListener("click", function () { select(id); });
    return b;
  }
  function section(title, items) {
    if (!items.length) { return; }
    details.appendChild(el("h3", title));
    var ul = el("ul");
    items.forEach(function (item) { var li = el("li"); if (typeof item === "string") { li.textContent = item; } else { li.appendChild(item); } ul.appendChild(li); });
    details.appendChild(ul);
  }
  function select(id) {
    if (selected !== null && nodeEls.has(selected)) { nodeEls.get(selected).classList.remove("selected"); }
    selected = id;
    var n = records.get(id), p = places.get(id);
    nodeEls.get(id).classList.add("selected");
    while (details.firstChild) { details.removeChild(details.firstChild); }
    details.appendChild(el("h2", label(id)));
    var badges = el("p");
    var cluster = clusters[p.cluster];
    badges.appendChild(el("span", cluster ? str(cluster.label) : "unclustered", "badge"));
    badges.appendChild(el("span", "confidence " + str(n.confidence, "?"), "badge"));
    if (p.superseded) { badges.appendChild(el("span", "superseded", "badge warn")); }
    details.appendChild(badges);
    var t = n.temporal && typeof n.temporal === "object" ? n.temporal : null;
    if (t) { details.appendChild(el("p", "As of " + str(t.source_date, "?") + " · valid from " + str(t.valid_from, "?") + " until " + str(t.valid_until, "?") + " · " + str(t.temporal_confidence, "?"), "hint")); }
    details.appendChild(el("p", str(n.definition)));
    if (n.relevance) { details.appendChild(el("p", str(n.relevance), "hint")); }
    section("Statements", list(n.statements).filter(function (x) { return typeof x === "string"; }));
    section("Citations", list(n.citations).filter(function (c) { return c && typeof c === "object"; }).map(function (c) {
      var span = el("span", "[" + c.n + "] " + str(c.label, str(c.source)) + (c.locator ? " — " + str(c.locator) : ""));
      var url = safeUrl(c.url);
      if (url) { var a = el("a", " link"); a.setAttribute("href", url); a.setAttribute("rel", "noopener noreferrer"); a.setAttribute("target", "_blank"); span.appendChild(a); }
      return span;
    }));
    var cited = edges.filter(function (e) { return e.target === id; });
    var out = edges.filter(function (e) { return e.source === id; });
    details.appendChild(el("h3", "Cited by (" + cited.length + ")"));
    var ulIn = el("ul"); ulIn.id = "cited-by";
    cited.forEach(function (e) { var li = el("li"); li.appendChild(linkTo(e.source)); li.appendChild(el("span", " " + types[e.type].name)); ulIn.appendChild(li); });
    details.appendChild(ulIn);
    details.appendChild(el("h3", "Outgoing (" + out.length + ")"));
    var ulOut = el("ul"); ulOut.id = "outgoing";
    out.forEach(function (e) { var li = el("li"); li.appendChild(el("span", types[e.type].name + " ")); li.appendChild(linkTo(e.target)); ulOut.appendChild(li); });
    details.appendChild(ulOut);
  }

  // -- filters: search, relationship types, clusters; cluster focus --------------------------------
  var search = document.getElementById("search");
  var typeShown = types.map(function () { return true; }), clusterShown = clusters.map(function () { return true; });
  function applyFilter() {
    var q = search.value.trim().toLowerCase(), visible = new Map();
    nodes.forEach(function (p) {
      var n = records.get(p.id);
      var hit = clusterShown[p.cluster] !== false && (!q || (label(p.id) + " " + str(n.definition)).toLowerCase().indexOf(q) >= 0);
      visible.set(p.id, hit);
      nodeEls.get(p.id).classList.toggle("hidden", !hit);
    });
    edges.forEach(function (e, i) {
      var shown = typeShown[e.type] && visible.get(e.source) && visible.get(e.target);
      edgeEls[i].line.classList.toggle("hidden", !shown); edgeEls[i].hit.classList.toggle("hidden", !shown);
    });
    hullEls.forEach(function (h, k) { if (h) { h.group.classList.toggle("hidden", !clusterShown[k]); } });
  }
  search.addEventListener("input", applyFilter);

  function swatch(color, arrow, dashed) {
    var s = svg("svg", { "class": "swatch", width: 30, height: 12, viewBox: "0 0 30 12", "aria-hidden": "true" });
    if (arrow) {
      s.appendChild(svg("path", { d: dashed ? "M9 6H21" : "M1 6H21", stroke: color, "stroke-width": 2, "stroke-dasharray": dashed ? "4 2" : "none" }));
      s.appendChild(svg("path", { d: "M20 1L29 6L20 11Z", fill: color }));
      if (dashed) { s.appendChild(svg("path", { d: "M10 1L1 6L10 11Z", fill: color })); }
    } else {
      s.appendChild(svg("rect", { x: 2, y: 1, width: 26, height: 10, rx: 3, fill: color, "fill-opacity": 0.3, stroke: color }));
    }
    return s;
  }
  var typeLegend = document.getElementById("type-legend");
  typeLegend.appendChild(el("span", "Relationships", "legend-title"));
  types.forEach(function (t, k) {
    var b = el("button", null, "edge-type" + (t.count ? "" : " empty"));
    b.type = "button"; b.setAttribute("data-edge-type", t.name); b.setAttribute("aria-pressed", "true");
    b.title = "Show or hide " + t.name + " relationships";
    b.appendChild(swatch(t.color, true, t.name === "tension"));
    b.appendChild(el("span", t.name, "name"));
    b.appendChild(el("span", " (" + t.count + ")", "count"));
    b.addEventListener("click", function () {
      typeShown[k] = !typeShown[k];
      b.setAttribute("aria-pressed", typeShown[k] ? "true" : "false");
      applyFilter();
    });
    typeLegend.appendChild(b);
  });
  var clusterLegend = document.getElementById("cluster-legend"), focus = null, focusButtons = [];
  clusterLegend.appendChild(el("span", "Clusters", "legend-title"));
  function applyFocus() {
    focusButtons.forEach(function (x, k) { x.classList.toggle("active", k === focus); });
    nodes.forEach(function (p) { nodeEls.get(p.id).classList.toggle("dim", focus !== null && p.cluster !== focus); });
    edges.forEach(function (e, i) {
      var dim = focus !== null && places.get(e.source).cluster !== focus && places.get(e.target).cluster !== focus;
      edgeEls[i].line.classList.toggle("dim", dim);
    });
    hullEls.forEach(function (h, k) { if (h) { h.group.classList.toggle("dim", focus !== null && k !== focus); } });
  }
  clusters.forEach(function (c, k) {
    var item = el("span", null, "cluster-item");
    var box = el("input");
    box.type = "checkbox"; box.checked = true; box.setAttribute("data-cluster-index", String(k));
    box.setAttribute("aria-label", "Show " + str(c.label));
    box.addEventListener("change", function () { clusterShown[k] = box.checked; applyFilter(); });
    var b = el("button");
    b.type = "button"; b.setAttribute("data-cluster-index", String(k));
    if (c.id !== null) { b.setAttribute("data-cluster", c.id); }
    b.title = "Focus on this cluster";
    b.appendChild(swatch(c.color, false, false));
    b.appendChild(el("span", str(c.label), "name"));
    b.addEventListener("click", function () { focus = focus === k ? null : k; applyFocus(); });
    focusButtons.push(b);
    item.appendChild(box); item.appendChild(b); clusterLegend.appendChild(item);
  });

  // -- an edge's type, label and description on hover -----------------------------------------------
  var tipBox = document.getElementById("edge-tip"), main = tipBox.parentNode;
  function showTip(i, ev) {
    var e = edges[i], r = edgeRecord(e);
    while (tipBox.firstChild) { tipBox.removeChild(tipBox.firstChild); }
    tipBox.appendChild(el("strong", types[e.type].name, "tip-type"));
    tipBox.appendChild(el("span", " " + label(e.source) + " → " + label(e.target), "tip-ends"));
    ["label", "explanation", "description"].forEach(function (key) {
      if (str(r[key])) { tipBox.appendChild(el("div", str(r[key]), "tip-" + key)); }
    });
    var box = main.getBoundingClientRect();
    tipBox.style.left = Math.round(ev.clientX - box.left + 14) + "px";
    tipBox.style.top = Math.round(ev.clientY - box.top + 14) + "px";
    tipBox.hidden = false;
    edgeEls[i].line.classList.add("hover");
  }
  function hideTip(i) { tipBox.hidden = true; edgeEls[i].line.classList.remove("hover"); }
  edgeEls.forEach(function (pair, i) {
    pair.hit.addEventListener("pointerenter", function (ev) { showTip(i, ev); });
    pair.hit.addEventListener("pointermove", function (ev) { showTip(i, ev); });
    pair.hit.addEventListener("pointerleave", function () { hideTip(i); });
  });

  // -- zoom, pan, drag ------------------------------------------------------------------------------
  function zoomAt(factor, px, py) {
    var k = Math.max(minK, Math.min(maxK, view.k * factor));
    view.x = px - (px - view.x) * (k / view.k); view.y = py - (py - view.y) * (k / view.k); view.k = k; applyView();
  }
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = canvas.getBoundingClientRect();
    zoomAt(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  document.getElementById("zoom-in").addEventListener("click", function () { var s = canvasSize(); zoomAt(1.25, s[0] / 2, s[1] / 2); });
  document.getElementById("zoom-out").addEventListener("click", function () { var s = canvasSize(); zoomAt(0.8, s[0] / 2, s[1] / 2); });
  document.getElementById("zoom-reset").addEventListener("click", function () { view = { x: fitted.x, y: fitted.y, k: fitted.k }; applyView(); });
  var drag = null;
  canvas.addEventListener("pointerdown", function (ev) {
    var target = ev.target.closest ? ev.target.closest(".node") : null;
    drag = { node: target ? target.getAttribute("data-id") : null, x: ev.clientX, y: ev.clientY, moved: false, vx: view.x, vy: view.y };
    if (!target) { canvas.classList.add("panning"); }
    tipBox.hidden = true;
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", function (ev) {
    if (!drag) { return; }
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; }
    if (drag.node !== null) {
      var p = places.get(drag.node);
      p.x += dx / view.k; p.y += dy / view.k; drag.x = ev.clientX; drag.y = ev.clientY;
      drawNode(p);
      touching.get(p.id).forEach(drawEdge);
      drawHull(p.cluster);
    } else { view.x = drag.vx + dx; view.y = drag.vy + dy; applyView(); }
  });
  canvas.addEventListener("pointerup", function () {
    if (drag && drag.node !== null && !drag.moved) { select(drag.node); }
    drag = null; canvas.classList.remove("panning");
  });
  nodeLayer.addEventListener("keydown", function (ev) {
    var target = ev.target.closest ? ev.target.closest(".node") : null;
    if (target && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); select(target.getAttribute("data-id")); }
  });
  fit();
}());
