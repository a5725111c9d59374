// elman serve: the two pages' script (plain JavaScript, nothing loaded from elsewhere).
// The predict page lists /v1/models, sends the typed lines to :predict and renders each
// prediction the way a person reads it; the reports page lists /reports.json.
"use strict";

(function () {
  const KEY = "elman-api-key";
  const $ = (selector) => document.querySelector(selector);
  let models = {};

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== null) node.setAttribute(name, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function setStatus(message, isError) {
    const status = $("#status");
    status.textContent = message || "";
    status.className = isError ? "error" : "muted";
  }

  async function api(path, body) {
    const headers = {};
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = "Bearer " + key;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method: body === undefined ? "GET" : "POST", headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (err) { data = null; }
    if (response.status === 401 && $("#key-form")) $("#key-form").hidden = false;
    if (!response.ok) throw new Error((data && data.error) || "HTTP " + response.status);
    return data;
  }

  // ------------------------------------------------------------ rendering

  function bars(entries, unit) {
    const best = Math.max(...entries.map((e) => e[1]));
    const box = el("div", { class: "bars" });
    for (const [name, p] of entries) {
      const fill = el("span", { class: "fill" });
      fill.style.width = (100 * p).toFixed(2) + "%";
      box.append(el("div", { class: "bar" + (p === best ? " top" : ""), "data-label": name,
                             "data-probability": String(p) },
                    el("span", { class: "name", title: name }, unit ? unit(name) : name),
                    el("span", { class: "track" }, fill),
                    el("span", { class: "value" }, p.toFixed(4))));
    }
    return box;
  }

  function offsets(text, tokens) {
    const out = [];
    let cursor = 0;
    for (const token of tokens) {
      const start = text.indexOf(token, cursor);
      if (start < 0) return null;
      out.push([start, start + token.length]);
      cursor = start + token.length;
    }
    return out;
  }

  function tagged(prediction) {
    let text = prediction.text;
    let spans = offsets(text, prediction.tokens);
    if (!spans) {
      text = prediction.tokens.join(" ");
      spans = offsets(text, prediction.tokens);
    }
    const box = el("div", { class: "tagged" });
    let cursor = 0;
    for (const entity of prediction.entities) {
      const start = spans[entity.start][0];
      const end = spans[entity.end - 1][1];
      if (start < cursor) continue;
      box.append(text.slice(cursor, start));
      box.append(el("mark", { class: "entity", "data-type": entity.type,
                              "data-text": text.slice(start, end), title: entity.type },
                    el("span", { class: "etext" }, text.slice(start, end)),
                    el("span", { class: "etype" }, entity.type)));
      cursor = end;
    }
    box.append(text.slice(cursor));
    const table = el("table", { class: "tokens" });
    const tokenRow = el("tr", {}, el("th", {}, "token"));
    const tagRow = el("tr", {}, el("th", {}, "tag"));
    prediction.tokens.forEach((token, i) => {
      tokenRow.append(el("td", {}, token));
      tagRow.append(el("td", { class: "tag" }, prediction.tags[i]));
    });
    table.append(tokenRow, tagRow);
    const count = prediction.entities.length;
    return [el("p", { class: "headline" }, count ? count + (count === 1 ? " entity" : " entities")
                                                 : "No entities found"), box, table];
  }

  function generatedText(prediction) {
    for (const key of ["continuation", "generated", "generation"]) {
      if (typeof prediction[key] === "string") {
        return el("p", { class: "generated" }, el("span", { class: "prefix" }, prediction.text),
                  " ", el("span", { class: "continuation" }, prediction[key]));
      }
    }
    return null;
  }

  function renderOne(model, prediction) {
    const box = el("div", { class: "result", "data-task": model.task });
    box.append(el("p", { class: "source" }, prediction.text));
    if (prediction.probabilities) {
      const entries = Object.entries(prediction.probabilities);
      box.append(el("p", { class: "headline" }, "Predicted: ",
                    el("strong", { class: "label" }, prediction.label)), bars(entries));
    } else if (prediction.entities && prediction.tokens) {
      box.append(...tagged(prediction));
    } else if (typeof prediction.translation === "string") {
      box.append(el("p", { class: "translation", lang: model.target_lang || null },
                    prediction.translation));
    }
    const generated = generatedText(prediction);
    if (generated) box.append(generated);
    if (Array.isArray(prediction.next)) {
      box.append(el("p", { class: "headline" }, "Most likely next tokens"),
                 bars(prediction.next.map((n) => [n.token, n.probability]),
                      (token) => JSON.stringify(token)));
    }
    box.append(el("details", {}, el("summary", {}, "JSON"),
                  el("pre", {}, JSON.stringify(prediction, null, 1))));
    return box;
  }


  // ------------------------------------------------------------ reading traces

  const SVG = "http://www.w3.org/2000/svg";
  const COLORS = ["#2f6fde", "#d9480f", "#12a150", "#9c36b5", "#e8590c", "#0c8599"];

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    return node;
  }

  // A line per class: its probability after each token read (x: tokens, y: 0..1).
  function traceChart(trace) {
    const steps = trace.steps, n = steps.length;
    const width = Math.max(320, 56 * n + 60), height = 180, left = 40, bottom = 150;
    const x = (i) => left + (n === 1 ? 0 : (i * (width - left - 20)) / (n - 1));
    const y = (p) => bottom - p * 130;
    const chart = svg("svg", { class: "trace-chart", viewBox: `0 0 ${width} ${height}`,
                               width, height, role: "img",
                               "aria-label": "class probabilities after each token" });
    for (const p of [0, 0.5, 1]) {
      chart.append(svg("line", { x1: left, x2: width - 10, y1: y(p), y2: y(p),
                                 class: "grid" }));
      const label = svg("text", { x: 4, y: y(p) + 4, class: "axis" });
      label.textContent = p.toFixed(1);
      chart.append(label);
    }
    trace.labels.forEach((name, k) => {
      const points = steps.map((s, i) => `${x(i)},${y(s.probabilities[name])}`).join(" ");
      chart.append(svg("polyline", { points, fill: "none", stroke: COLORS[k % COLORS.length],
                                     "stroke-width": 2, "data-label": name }));
      const key = svg("text", { x: width - 10, y: 14 + 14 * k, "text-anchor": "end",
                                fill: COLORS[k % COLORS.length], class: "axis" });
      key.textContent = name;
      chart.append(key);
    });
    steps.forEach((s, i) => {
      const word = svg("text", { x: x(i), y: bottom + 18, "text-anchor": "middle",
                                 class: "token" });
      word.textContent = s.token;
      chart.append(word);
    });
    return chart;
  }

  function meter(p, scale) {
    const fill = el("span", { class: "fill" });
    fill.style.width = (100 * Math.min(1, p / (scale || 1))).toFixed(2) + "%";
    return el("span", { class: "track" }, fill);
  }

  function traceTable(head, rows) {
    const table = el("table", { class: "trace" });
    table.append(el("tr", {}, ...head.map((h) => el("th", {}, h))));
    for (const row of rows) table.append(el("tr", {}, ...row.map((c) => el("td", {}, c))));
    return table;
  }

  // Output tokens (rows) against source tokens (columns), shaded by attention weight.
  function heatmap(trace) {
    const table = el("table", { class: "heatmap" });
    table.append(el("tr", {}, el("th", {}, ""),
                    ...trace.source_tokens.map((t) => el("th", { class: "src" }, t))));
    for (const step of trace.steps) {
      const row = el("tr", {}, el("th", {}, step.token));
      step.attention.forEach((w) => {
        const cell = el("td", { "data-weight": String(w), title: w.toFixed(3) },
                        w >= 0.1 ? w.toFixed(2) : "");
        cell.style.backgroundColor = `rgba(47, 111, 222, ${w.toFixed(3)})`;
        if (w > 0.55) cell.style.color = "#fff";
        row.append(cell);
      });
      table.append(row);
    }
    return table;
  }

  function renderTrace(model, trace) {
    const box = el("div", { class: "trace-box", "data-task": model.task });
    box.append(el("p", { class: "headline" }, "How the model reads it"));
    if (model.task === "sentiment") {
      // attention pooling: each token's weight in the whole text (they sum to 1)
      const weighted = trace.steps.length > 0 && typeof trace.steps[0].attention === "number";
      box.append(traceChart(trace), traceTable(
        ["t", "token", ...trace.labels, ...(weighted ? ["attention", ""] : [])],
        trace.steps.map((s, i) => [String(i + 1), s.token,
                                   ...trace.labels.map((l) => s.probabilities[l].toFixed(4)),
                                   ...(weighted ? [s.attention.toFixed(4),
                                                   meter(s.attention)] : [])])));
    } else if (model.task === "tagging") {
      box.append(traceTable(["token", "tag", "p(tag)", ""], trace.steps.map(
        (s) => [s.token, s.tag, s.probability.toFixed(4), meter(s.probability)])));
      for (const e of trace.entities) {
        box.append(el("p", { class: "entity-p" }, `${e.type} “${e.text}”: p = `
                      + e.probability.toFixed(4)));
      }
    } else if (model.task === "translation") {
      box.append(traceTable(["output token", "p", ""], trace.steps.map(
        (s) => [s.token, s.probability.toFixed(4), meter(s.probability)])));
      if (trace.steps.length && Array.isArray(trace.steps[0].attention)) {
        box.append(el("p", { class: "headline" }, "Attention over the source"), heatmap(trace));
      }
    } else if (model.task === "lm") {
      const most = Math.max(1, ...trace.steps.map((s) => s.surprisal_bits));
      box.append(traceTable(["token", "surprisal (bits)", "", "expected"], trace.steps.map(
        (s) => [s.token, s.surprisal_bits.toFixed(2), meter(s.surprisal_bits, most),
                s.expected.map((e) => `${e.token} ${e.probability.toFixed(2)}`).join(", ")])));
      box.append(el("p", { class: "muted" }, `perplexity ${trace.perplexity.toFixed(2)}`));
    }
    return box;
  }

  // ------------------------------------------------------------ predict page

  function describe(model) {
    const parts = [model.task];
    if (model.languages) parts.push(model.languages.filter(Boolean).join(" → "));
    const metrics = model.metrics;
    if (metrics && metrics.main_metric && metrics.scores) {
      const value = metrics.scores[metrics.main_metric];
      if (typeof value === "number") {
        parts.push(`${metrics.split} ${metrics.main_metric} ${value.toFixed(4)}`);
      }
    }
    if (model.finished) parts.push("trained " + model.finished.replace("T", " "));
    return parts.join(" · ");
  }

  function showModel() {
    const model = models[$("#model").value];
    const options = $("#options");
    options.replaceChildren();
    if (!model) return;
    $("#model-info").textContent = describe(model);
    for (const [name, spec] of Object.entries(model.options || {})) {
      const input = el("input", { id: "option-" + name, "data-option": name,
                                  "data-type": spec.type });
      if (spec.type === "boolean") {
        input.type = "checkbox";
        input.checked = Boolean(spec.default);
      } else if (spec.type === "integer" || spec.type === "number") {
        input.type = "number";
        input.step = spec.type === "integer" ? "1" : "any";
        if (spec.min !== null) input.min = spec.min;
        if (spec.max !== null) input.max = spec.max;
        if (spec.default !== null) input.value = spec.default;
      } else if (spec.default !== null) {
        input.value = spec.default;
      }
      options.append(el("label", {}, name + " ", input));
    }
  }

  function optionValues() {
    const out = {};
    for (const input of document.querySelectorAll("[data-option]")) {
      const type = input.dataset.type;
      if (type === "boolean") out[input.dataset.option] = input.checked;
      else if (input.value === "") continue;
      else if (type === "integer" || type === "number") out[input.dataset.option] = Number(input.value);
      else out[input.dataset.option] = input.value;
    }
    return out;
  }

  async function predict(event) {
    event.preventDefault();
    const model = models[$("#model").value];
    const lines = $("#text").value.split("\n").filter((line) => line.trim());
    const results = $("#results");
    if (!model) return setStatus("No model is selected.", true);
    if (!lines.length) return setStatus("Type some text first.", true);
    $("#submit").disabled = true;
    setStatus("Predicting…");
    const began = performance.now();
    try {
      const path = `/v1/models/${encodeURIComponent(model.name)}`;
      const body = Object.assign({ instances: lines }, optionValues());
      const data = await api(path + ":predict", body);
      const boxes = data.predictions.map((p) => renderOne(model, p));
      // the trace on request, and always for translation (its attention heatmap)
      if ($("#trace").checked || model.task === "translation") {
        const traceBody = { instances: lines };
        for (const name of model.trace_options || []) {
          if (name in body) traceBody[name] = body[name];
        }
        const traced = await api(path + ":trace", traceBody);
        traced.traces.forEach((t, i) => boxes[i].insertBefore(renderTrace(model, t),
                                                              boxes[i].lastChild));
      }
      results.replaceChildren(...boxes);
      setStatus(`${data.predictions.length} prediction(s) in ` +
                `${Math.round(performance.now() - began)} ms`);
      document.body.dataset.state = "done";
    } catch (err) {
      results.replaceChildren();
      setStatus(err.message, true);
      document.body.dataset.state = "error";
    } finally {
      $("#submit").disabled = false;
    }
  }

  async function initPredict() {
    try {
      const data = await api("/v1/models");
      models = {};
      const select = $("#model");
      select.replaceChildren();
      for (const model of data.models) {
        models[model.name] = model;
        select.append(el("option", { value: model.name }, `${model.name} (${model.task})`));
      }
      const wanted = new URLSearchParams(location.search).get("model");
      if (wanted && models[wanted]) select.value = wanted;
      showModel();
      setStatus(data.models.length ? "" : "This server has no models.");
      document.body.dataset.ready = "true";
    } catch (err) {
      setStatus(err.message, true);
    }
  }

  // ------------------------------------------------------------ reports page

  async function initReports() {
    try {
      const data = await api("/reports.json");
      const body = $("#reports tbody");
      for (const row of data.reports) {
        const href = "/reports/" + row.path.split("/").map(encodeURIComponent).join("/");
        body.append(el("tr", { "data-path": row.path },
                       el("td", {}, row.finished.replace("T", " ")), el("td", {}, row.task),
                       el("td", {}, el("a", { href }, row.run)), el("td", {}, row.split),
                       el("td", {}, row.main_metric),
                       el("td", {}, typeof row.value === "number" ? row.value.toFixed(4) : "")));
      }
      setStatus(data.reports.length ? "" : "No reports yet: train a run first.");
      document.body.dataset.ready = "true";
    } catch (err) {
      setStatus(err.message, true);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const keyForm = $("#key-form");
    if (keyForm) {
      keyForm.addEventListener("submit", (event) => {
        event.preventDefault();
        sessionStorage.setItem(KEY, $("#api-key").value.trim());
        keyForm.hidden = true;
        initPredict();
      });
    }
    if (document.body.dataset.page === "reports") {
      initReports();
    } else {
      $("#model").addEventListener("change", showModel);
      $("#predict-form").addEventListener("submit", predict);
      initPredict();
    }
  });
})();
