"use strict";
// episteme-graph viewer: a dependency-free SVG view of one embedded graph. Every piece of graph text
// enters the page through textContent or an attribute value, never as markup; nothing is fetched.
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"];
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var graph = data && typeof data === "object" ? data : {};

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
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }
  function fnv(text) {  // FNV-1a: deterministic jitter per node id
    var h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
    return h;
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

  // -- the model ---------------------------------------------------------------------------------
  var meta = graph.metadata && typeof graph.metadata === "object" ? graph.metadata : {};
  var nodes = [], byId = {};
  list(graph.nodes).forEach(function (n) {
    if (n && typeof n === "object" && typeof n.id === "string" && !byId[n.id]) { byId[n.id] = n; nodes.push(n); }
  });
  var edges = list(graph.edges).filter(function (e) {
    return e && typeof e === "object" && byId[e.source] && byId[e.target] && typeof e.type === "string";
  });
  var clusters = [], clusterIndex = {};
  list(graph.clusters).forEach(function (c) {
    if (c && typeof c === "object" && typeof c.id === "string" && !(c.id in clusterIndex)) { clusterIndex[c.id] = clusters.length; clusters.push(c); }
  });
  var superseded = {};
  nodes.forEach(function (n) { if (n.temporal && typeof n.temporal === "object" && n.temporal.valid_until) { superseded[n.id] = true; } });
  edges.forEach(function (e) { if (e.type === "replaces") { superseded[e.target] = true; } });

  // -- header, legend, footer ---------------------------------------------------------------------
  document.getElementById("title").textContent = str(meta.title, "Untitled graph");
  var score = typeof meta.conformance_score === "number" ? meta.conformance_score : meta.quality_score;
  document.getElementById("meta").textContent = nodes.length + " concepts · " + edges.length + " relationships · " +
    clusters.length + " clusters · conformance " + (typeof score === "number" ? score : "?") + "/100" +
    (meta.domain ? " · " + str(meta.domain) : "") + (meta.distillation_date ? " · " + str(meta.distillation_date) : "");
  document.getElementById("footer").textContent = "Semantic accuracy was not evaluated: a valid graph is well formed, not true.";

  // -- layout (deterministic) ---------------------------------------------------------------------
  var canvas = document.getElementById("canvas");
  var width = Math.max(canvas.clientWidth || 800, 400), height = Math.max(canvas.clientHeight || 600, 300);
  var pos = {}, radius = {};
  var ring = Math.min(width, height) * 0.32, cx = width / 2, cy = height / 2, count = Math.max(clusters.length, 1);
  nodes.forEach(function (n) {
    var ci = n.cluster in clusterIndex ? clusterIndex[n.cluster] : 0;
    var angle = 2 * Math.PI * ci / count, h = fnv(n.id);
    var jitter = 30 + (h % 70), turn = ((h >>> 8) % 360) * Math.PI / 180;
    pos[n.id] = { x: cx + (count > 1 ? ring * Math.cos(angle) : 0) + jitter * Math.cos(turn),
                  y: cy + (count > 1 ? ring * Math.sin(angle) : 0) + jitter * Math.sin(turn) };
    var weight = 18 * list(n.statements).length + str(n.definition).length;
    radius[n.id] = Math.max(14, Math.min(40, 12 + 1.2 * Math.sqrt(weight)));
  });
  var steps = nodes.length > 250 ? 0 : (nodes.length > 120 ? 75 : 150);
  for (var s = 0; s < steps; s++) {
    var cool = 1 - s / Math.max(steps, 1), force = {};
    nodes.forEach(function (n) { force[n.id] = { x: (cx - pos[n.id].x) * 0.002, y: (cy - pos[n.id].y) * 0.002 }; });
    for (var i = 0; i < nodes.length; i++) {
      for (var j = i + 1; j < nodes.length; j++) {
        var a = pos[nodes[i].id], b = pos[nodes[j].id], dx = a.x - b.x, dy = a.y - b.y;
        var d2 = Math.max(dx * dx + dy * dy, 1), f = Math.min(18, 7500 / d2), d = Math.sqrt(d2);
        force[nodes[i].id].x += f * dx / d; force[nodes[i].id].y += f * dy / d;
        force[nodes[j].id].x -= f * dx / d; force[nodes[j].id].y -= f * dy / d;
      }
    }
    edges.forEach(function (e) {
      var a = pos[e.source], b = pos[e.target], dx = b.x - a.x, dy = b.y - a.y, d = Math.sqrt(dx * dx + dy * dy) || 1;
      var f = 0.007 * (d - 145);
      force[e.source].x += f * dx / d; force[e.source].y += f * dy / d;
      force[e.target].x -= f * dx / d; force[e.target].y -= f * dy / d;
    });
    nodes.forEach(function (n) { pos[n.id].x += force[n.id].x * cool; pos[n.id].y += force[n.id].y * cool; });
  }

  // -- drawing --------------------------------------------------------------------------------------
  var viewport = document.getElementById("viewport");
  var edgeLayer = document.getElementById("edges"), nodeLayer = document.getElementById("nodes");
  var view = { x: 0, y: 0, k: 1 };
  function applyView() { viewport.setAttribute("transform", "translate(" + view.x.toFixed(2) + "," + view.y.toFixed(2) + ") scale(" + view.k.toFixed(4) + ")"); }
  var edgeEls = edges.map(function (e) {
    var line = svg("line", { "class": "edge" + (e.type === "tension" ? " tension" : ""),
      "stroke-width": 1 + 4 * (typeof e.weight === "number" ? Math.max(0, Math.min(1, e.weight)) : 0.5) });
    line.setAttribute("data-source", e.source); line.setAttribute("data-target", e.target);
    var title = svg("title"); title.textContent = str(e.label, e.type); line.appendChild(title);
    edgeLayer.appendChild(line);
    return line;
  });
  var nodeEls = {};
  nodes.forEach(function (n) {
    var g = svg("g", { "class": "node" + (superseded[n.id] ? " superseded" : ""), "tabindex": 0, "role": "button" });
    g.setAttribute("data-id", n.id);
    var color = COLORS[(n.cluster in clusterIndex ? clusterIndex[n.cluster] : 0) % COLORS.length];
    g.appendChild(svg("circle", { r: radius[n.id], fill: color }));
    var label = svg("text", { dy: radius[n.id] + 14 });
    label.textContent = str(n.label, n.id);
    g.appendChild(label);
    nodeLayer.appendChild(g);
    nodeEls[n.id] = g;
  });
  function place() {
    nodes.forEach(function (n) { nodeEls[n.id].setAttribute("transform", "translate(" + pos[n.id].x.toFixed(1) + "," + pos[n.id].y.toFixed(1) + ")"); });
    edges.forEach(function (e, i) {
      var a = pos[e.source], b = pos[e.target];
      edgeEls[i].setAttribute("x1", a.x.toFixed(1)); edgeEls[i].setAttribute("y1", a.y.toFixed(1));
      edgeEls[i].setAttribute("x2", b.x.toFixed(1)); edgeEls[i].setAttribute("y2", b.y.toFixed(1));
    });
  }
  place(); applyView();

  // -- details: statements, citations, backlinks ----------------------------------------------------
  var details = document.getElementById("details"), selected = null;
  function linkTo(id) {
    var b = el("button", str(byId[id].label, id), "link");
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
    if (selected && nodeEls[selected]) { nodeEls[selected].classList.remove("selected"); }
    selected = id;
    var n = byId[id];
    nodeEls[id].classList.add("selected");
    while (details.firstChild) { details.removeChild(details.firstChild); }
    details.appendChild(el("h2", str(n.label, id)));
    var badges = el("p");
    var cluster = clusters[clusterIndex[n.cluster]];
    badges.appendChild(el("span", cluster ? str(cluster.label, cluster.id) : str(n.cluster, "unclustered"), "badge"));
    badges.appendChild(el("span", "confidence " + str(n.confidence, "?"), "badge"));
    if (superseded[id]) { badges.appendChild(el("span", "superseded", "badge warn")); }
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
    cited.forEach(function (e) { var li = el("li"); li.appendChild(linkTo(e.source)); li.appendChild(el("span", " " + e.type)); ulIn.appendChild(li); });
    details.appendChild(ulIn);
    details.appendChild(el("h3", "Outgoing (" + out.length + ")"));
    var ulOut = el("ul"); ulOut.id = "outgoing";
    out.forEach(function (e) { var li = el("li"); li.appendChild(el("span", e.type + " ")); li.appendChild(linkTo(e.target)); ulOut.appendChild(li); });
    details.appendChild(ulOut);
  }

  // -- search and cluster focus ---------------------------------------------------------------------
  var search = document.getElementById("search");
  function applyFilter() {
    var q = search.value.trim().toLowerCase(), visible = {};
    nodes.forEach(function (n) {
      var hit = !q || (str(n.label) + " " + str(n.definition)).toLowerCase().indexOf(q) >= 0;
      visible[n.id] = hit;
      nodeEls[n.id].classList.toggle("hidden", !hit);
    });
    edges.forEach(function (e, i) { edgeEls[i].classList.toggle("hidden", !(visible[e.source] && visible[e.target])); });
  }
  search.addEventListener("input", applyFilter);
  var legend = document.getElementById("legend"), focus = null, legendButtons = [];
  clusters.forEach(function (c, ci) {
    var b = el("button", str(c.label, c.id)); b.type = "button"; b.setAttribute("data-cluster", c.id);
    b.addEventListener("click", function () {
      focus = focus === c.id ? null : c.id;
      legendButtons.forEach(function (x) { x.classList.toggle("active", x.getAttribute("data-cluster") === focus); });
      nodes.forEach(function (n) { nodeEls[n.id].classList.toggle("dim", focus !== null && n.cluster !== focus); });
      edges.forEach(function (e, i) { edgeEls[i].classList.toggle("dim", focus !== null && byId[e.source].cluster !== focus && byId[e.target].cluster !== focus); });
    });
    legendButtons.push(b); legend.appendChild(b);
  });

  // -- zoom, pan, drag ------------------------------------------------------------------------------
  function zoomAt(factor, px, py) {
    var k = Math.max(0.2, Math.min(4, view.k * factor));
    view.x = px - (px - view.x) * (k / view.k); view.y = py - (py - view.y) * (k / view.k); view.k = k; applyView();
  }
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = canvas.getBoundingClientRect();
    zoomAt(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  document.getElementById("zoom-in").addEventListener("click", function () { zoomAt(1.25, width / 2, height / 2); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoomAt(0.8, width / 2, height / 2); });
  document.getElementById("zoom-reset").addEventListener("click", function () { view = { x: 0, y: 0, k: 1 }; applyView(); });
  var drag = null;
  canvas.addEventListener("pointerdown", function (ev) {
    var target = ev.target.closest ? ev.target.closest(".node") : null;
    drag = { node: target ? target.getAttribute("data-id") : null, x: ev.clientX, y: ev.clientY, moved: false, vx: view.x, vy: view.y };
    if (!target) { canvas.classList.add("panning"); }
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", function (ev) {
    if (!drag) { return; }
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; }
    if (drag.node) {
      pos[drag.node].x += dx / view.k; pos[drag.node].y += dy / view.k; drag.x = ev.clientX; drag.y = ev.clientY; place();
    } else { view.x = drag.vx + dx; view.y = drag.vy + dy; applyView(); }
  });
  canvas.addEventListener("pointerup", function () {
    if (drag && drag.node && !drag.moved) { select(drag.node); }
    drag = null; canvas.classList.remove("panning");
  });
  nodeLayer.addEventListener("keydown", function (ev) {
    var target = ev.target.closest ? ev.target.closest(".node") : null;
    if (target && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); select(target.getAttribute("data-id")); }
  });
}());
