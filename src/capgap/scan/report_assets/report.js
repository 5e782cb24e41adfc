// capgap scan --format html: filters by severity, rule, subsystem, model and place.
// The state lives in the URL's fragment (report.html#severity=high&subsystem=MoE), so a filtered
// view can be bookmarked or shared; with no fragment the page starts from the command's filters.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var items = Array.prototype.slice.call(document.querySelectorAll("article.finding"));
  var files = Array.prototype.slice.call(document.querySelectorAll("section.file"));
  var count = document.getElementById("count");
  var NOT_RUNTIME = { test: 1, benchmark: 1, example: 1, vendored: 1 };

  function parse(text) {
    var out = {};
    text.replace(/^#/, "").split("&").forEach(function (pair) {
      if (!pair) return;
      var i = pair.indexOf("=");
      try {
        out[decodeURIComponent(i < 0 ? pair : pair.slice(0, i))] = decodeURIComponent(i < 0 ? "" : pair.slice(i + 1));
      } catch (e) { /* a malformed fragment keeps the defaults */ }
    });
    return out;
  }

  function read() {
    var sev = [];
    form.querySelectorAll("input[name=severity]").forEach(function (box) { if (box.checked) sev.push(box.value); });
    return { severity: sev.join(","), rule: form.rule.value, subsystem: form.subsystem.value,
             model: form.model.value, where: form.where.value };
  }

  function pick(select, value) {
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === value) { select.selectedIndex = i; return; }
    }
  }

  function write(state) {
    if (state.severity !== undefined) {
      var want = state.severity.split(",");
      form.querySelectorAll("input[name=severity]").forEach(function (box) {
        box.checked = want.indexOf(box.value) >= 0;
      });
    }
    ["rule", "subsystem", "model", "where"].forEach(function (name) {
      if (state[name] !== undefined) pick(form[name], state[name]);
    });
  }

  function shows(el, s) {
    var d = el.dataset;
    if (s.severity.split(",").indexOf(d.severity) < 0) return false;
    if (s.rule !== "all" && d.rule !== s.rule) return false;
    if (s.subsystem !== "all" && d.subsystem !== s.subsystem) return false;
    if (s.model === "none" && d.model) return false;
    if (s.model !== "all" && s.model !== "none" && d.model && d.model !== s.model) return false;
    var test = NOT_RUNTIME.hasOwnProperty(d.where);
    if (s.where === "runtime" && test) return false;
    if (s.where === "test" && !test) return false;
    return true;
  }

  function apply() {
    var state = read();
    var shown = 0;
    items.forEach(function (el) {
      var on = shows(el, state);
      el.hidden = !on;
      if (on) shown += 1;
    });
    files.forEach(function (file) {
      file.hidden = !file.querySelector("article.finding:not([hidden])");
    });
    count.textContent = shown + " of " + items.length + " findings shown";
    document.body.setAttribute("data-shown", String(shown));
    return state;
  }

  function fragment(state) {
    return "#" + Object.keys(state).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(state[k]);
    }).join("&");
  }

  write(parse(document.body.getAttribute("data-defaults") || ""));
  if (location.hash.length > 1) write(parse(location.hash));
  apply();
  form.addEventListener("change", function () {
    var state = apply();
    try { history.replaceState(null, "", fragment(state)); } catch (e) { /* file: URLs may refuse */ }
  });
  window.addEventListener("hashchange", function () { write(parse(location.hash)); apply(); });
  document.body.setAttribute("data-ready", "1");
})();
