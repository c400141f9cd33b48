/* trainprof report: draws the page from the data element, which holds the
 * JSON of trainprof summary, mem and log as they print it. Nothing
 * here computes a number the commands do not give: it picks, bins for
 * display and formats (as the commands' tables do). Text from the inputs
 * (kernel names, paths, call sites) only ever goes in as text. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('trainprof-data').textContent);
  var main = document.getElementById('report');
  var charts = {}; /* id -> ECharts instance: the tests read points through it */
  window.trainprofCharts = charts;
  window.trainprofData = D;

  /* ---- formats, as lib/report/format.c writes them ---- */
  function sig(v, prec) {
    var s = Number(v.toPrecision(prec));
    return Math.abs(s) >= 1e21 || /e/.test(String(s)) ? v.toFixed(0) : String(s);
  }
  function fmtNs(ns) {
    if (ns === null || ns === undefined || isNaN(ns)) return 'n/a';
    var a = Math.abs(ns);
    if (a < 1000) return Math.round(ns) + ' ns';
    if (a < 999500) return sig(ns / 1e3, 3) + ' us';
    if (a < 999500000) return sig(ns / 1e6, 3) + ' ms';
    return sig(ns / 1e9, 4) + ' s';
  }
  function fmtBytes(b) {
    if (b === null || b === undefined || isNaN(b)) return 'n/a';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], v = b, u = 0;
    if (Math.abs(v) < 1024) return Math.round(b) + ' B';
    while (Math.abs(v) >= 999.5 && u < 6) { v /= 1024; u++; }
    return sig(v, 3) + ' ' + units[u];
  }
  function fmtReal(v) { return typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v); }
  function fmtPct(x) { return x === null || x === undefined || isNaN(x) ? 'n/a' : (100 * x).toFixed(1) + '%'; }
  function fmtNum(x, d) { return x === null || x === undefined ? 'n/a' : Number(x).toFixed(d === undefined ? 2 : d); }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function share(part, whole) { return whole > 0 ? part / whole : 0; }

  /* Kernel names as the text tables show them at level 0 (lib/report/
   * names.c, docs/METRICS.md "Kernel names in tables"): template arguments
   * as <...>, no parameter list, no return type; no signature, or an
   * unclosed bracket: the name as it is. */
  function ident(c) { return /[A-Za-z0-9_]/.test(c || ''); }
  function opToken(s, i) {
    if (s.substr(i, 8) !== 'operator' || (i && ident(s[i - 1])) || ident(s[i + 8])) return 0;
    var j = i + 8;
    if ((s[j] === '(' && s[j + 1] === ')') || (s[j] === '[' && s[j + 1] === ']')) return 10;
    while (j < i + 11 && j < s.length && '<>=!+-*/%^&|~,'.indexOf(s[j]) >= 0) j++;
    return j - i;
  }
  function closing(s, i) {
    var stack = [];
    for (var j = i; j < s.length; j++) {
      var op = opToken(s, j);
      if (op) { j += op - 1; continue; }
      var c = s[j];
      if (c === '-' && s[j + 1] === '>') { j++; continue; }
      if (c === '<' || c === '(') stack.push(c);
      else if (c === ')') { while (stack.length && stack[stack.length - 1] === '<') stack.pop(); stack.pop(); }
      else if (c === '>' && stack.length && stack[stack.length - 1] === '<') stack.pop();
      else continue;
      if (!stack.length) return j;
    }
    return -1;
  }
  function shortName(name) {
    if (typeof name !== 'string' || (name.indexOf('<') < 0 && name.indexOf('(') < 0)) return name;
    var out = '', did = false, lastSpace = 0, opEnd = -1, i = 0, m;
    while (i < name.length) {
      var op = opToken(name, i);
      if (op) { out += name.substr(i, op); i += op; opEnd = i; continue; }
      var c = name[i];
      if (c === '-' && name[i + 1] === '>') { out += '->'; i += 2; }
      else if (c === '<') {
        if ((m = closing(name, i)) < 0) return name;
        out += '<...>'; did = true; i = m + 1;
      } else if (c === '(') {
        if ((m = closing(name, i)) < 0) return name;
        if ((i && (ident(name[i - 1]) || name[i - 1] === '>')) || opEnd === i) {
          did = true; i = m + 1;
          for (var again = true; again;) {
            again = false;
            [' const', ' volatile', ' &&', ' &', ' noexcept'].forEach(function (q) {
              if (name.substr(i, q.length) === q && !ident(name[i + q.length])) { i += q.length; again = true; }
            });
          }
        } else { out += name.substring(i, m + 1); i = m + 1; }
      } else { out += c; if (c === ' ') lastSpace = out.length; i++; }
    }
    if (did && lastSpace && lastSpace < out.length) out = out.substring(lastSpace);
    return out;
  }
  /* The names of one table as shown: short, and in full where two
   * different names shorten alike (the text tables go a level deeper
   * first; a page has room for the whole name). */
  function displayNames(names) {
    var byShort = {}, out = {};
    names.forEach(function (n) { var k = shortName(n); (byShort[k] = byShort[k] || {})[n] = 1; });
    names.forEach(function (n) { var k = shortName(n); out[n] = Object.keys(byShort[k]).length > 1 ? n : k; });
    return out;
  }

  /* ---- DOM ---- */
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var toc = document.getElementById('toc');
  function section(id, title, intro) {
    var s = el('section', { id: id });
    s.appendChild(el('h2', null, title));
    if (intro) s.appendChild(el('p', { 'class': 'note' }, intro));
    main.appendChild(s);
    var a = el('a', { href: '#' + id }, title);
    toc.appendChild(a);
    return s;
  }
  function card(box, key, value) {
    var c = el('div', { 'class': 'card' });
    c.appendChild(el('div', { 'class': 'v' }, value));
    c.appendChild(el('div', { 'class': 'k' }, key));
    box.appendChild(c);
  }

  /* A chart in PARENT: option -> ECharts instance, kept by ID. */
  function chart(parent, id, option, tall) {
    var div = el('div', { id: id, 'class': tall ? 'chart tall' : 'chart', 'data-chart': id });
    parent.appendChild(div);
    var c = echarts.init(div, null, { renderer: 'canvas' });
    option.animation = false;
    if (!option.tooltip) option.tooltip = { trigger: 'axis' };
    option.tooltip.confine = true;
    option.tooltip.className = 'tp-tooltip';
    if (!option.grid) option.grid = { left: 90, right: 30, top: 50, bottom: 60, containLabel: false };
    c.setOption(option);
    charts[id] = c;
    return c;
  }
  window.addEventListener('resize', function () { for (var k in charts) charts[k].resize(); });

  /* A sortable, filterable table: COLS [{key, title, num, fmt}], ROWS objects. */
  function table(parent, id, cols, rows, filterable) {
    var box = el('div', { 'class': 'tablebox' });
    var t = el('table', { 'class': 'data', id: id });
    var thead = el('thead'), tr = el('tr');
    cols.forEach(function (c, i) {
      var th = el('th', { 'data-col': c.key, 'class': c.num ? 'num' : '' }, c.title);
      th.addEventListener('click', function () { sortBy(i); });
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    t.appendChild(thead);
    var tbody = el('tbody');
    t.appendChild(tbody);
    var order = rows.slice(), shown = {};
    cols.forEach(function (c) { if (c.name) shown[c.key] = displayNames(rows.map(function (r) { return r[c.key]; }).filter(function (v) { return typeof v === 'string'; })); });
    function draw() {
      var q = filter ? filter.value.toLowerCase() : '';
      tbody.textContent = '';
      order.forEach(function (r) {
        if (q && !cols.some(function (c) { return String(r[c.key] === undefined ? '' : r[c.key]).toLowerCase().indexOf(q) >= 0; })) return;
        var row = el('tr');
        cols.forEach(function (c) {
          var v = r[c.key];
          var text = v === null || v === undefined ? '' : c.fmt ? c.fmt(v, r) : c.name && shown[c.key][v] !== undefined ? shown[c.key][v] : String(v);
          if (c.name && text.length > 160) text = text.slice(0, 100) + '\u2026' + text.slice(-59); /* both ends stay readable */
          var td = el('td', { 'class': c.num ? 'num' : (c.name ? 'name' : '') }, text);
          if (c.name && text !== v && typeof v === 'string') td.setAttribute('title', v);
          if (c.num && typeof v === 'number') td.setAttribute('data-value', String(v));
          row.appendChild(td);
        });
        tbody.appendChild(row);
      });
    }
    function sortBy(i) {
      var ths = thead.querySelectorAll('th'), c = cols[i];
      var dir = ths[i].getAttribute('aria-sort') === 'descending' ? 'ascending' : 'descending';
      ths.forEach(function (h) { h.removeAttribute('aria-sort'); });
      ths[i].setAttribute('aria-sort', dir);
      var s = dir === 'ascending' ? 1 : -1;
      order.sort(function (a, b) {
        var x = a[c.key], y = b[c.key];
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (c.num ? (x - y) : String(x).localeCompare(String(y))) * s;
      });
      draw();
    }
    var filter = null;
    if (filterable) {
      filter = el('input', { 'class': 'filter', type: 'search', placeholder: 'filter rows', 'aria-label': 'filter ' + id });
      filter.addEventListener('input', draw);
      parent.appendChild(filter);
    }
    draw();
    box.appendChild(t);
    parent.appendChild(box);
    return t;
  }

  var S = D.summary, traces = S ? S.traces : [], ranksView = S ? S.ranks : null;
  var labels = traces.map(function (t) { return t.label; });
  var straggler = ranksView && ranksView.collectives_straggler !== undefined && ranksView.collectives_straggler !== null
    ? ranksView.collectives_straggler : (ranksView ? ranksView.straggler : null);
  function rankLabel(t) { return t.rank !== undefined && t.rank !== null && t.rank >= 0 ? 'rank ' + t.rank : t.label; }
  function isStraggler(t) { return straggler !== null && straggler !== undefined && t.rank === straggler; }

  /* Ranks shown one per row up to MAX_ROWS, else binned: each bin the
   * worst (max) of its ranks, named by its range. */
  var MAX_ROWS = 64;
  function bins(n) {
    if (n <= MAX_ROWS) return null;
    var per = Math.ceil(n / MAX_ROWS), out = [];
    for (var i = 0; i < n; i += per) out.push([i, Math.min(n, i + per)]);
    return out;
  }

  /* A bar per rank (or per bin of ranks past MAX_ROWS) in PARENT: ROWS the
   * per-rank records, NAME(row) a rank's name, SERIES [{name, color,
   * value(row) (ms, % ...: null when it has none)}], stacked when STACK;
   * a bin's bar is the mean of its ranks' (WORST: their largest). */
  function rankBars(parent, id, rows, name, series, opts) {
    var b = bins(rows.length), groups = b || rows.map(function (r, i) { return [i, i + 1]; });
    var names = b ? b.map(function (x) { return name(rows[x[0]]) + ' .. ' + name(rows[x[1] - 1]); }) : rows.map(name);
    var fold = function (f, x) {
      var s = 0, m = 0, n = 0;
      for (var i = x[0]; i < x[1]; i++) { var v = f(rows[i]); if (v !== null && v !== undefined) { s += v; m = Math.max(m, v); n++; } }
      return n ? (opts.worst ? m : s / n) : null;
    };
    chart(parent, id, {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: opts.format },
      legend: { top: 5 },
      xAxis: { type: 'category', data: names, name: 'rank', nameLocation: 'middle', nameGap: 30 },
      yAxis: { type: 'value', name: opts.yName, max: opts.yMax },
      dataZoom: [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 8 }],
      series: series.map(function (sr) {
        return { name: sr.name, type: 'bar', stack: opts.stack, data: groups.map(function (x) { return fold(sr.value, x); }),
                 itemStyle: sr.color ? { color: sr.color } : undefined };
      })
    });
    if (b) parent.appendChild(el('p', { 'class': 'note' }, 'Binned ranks: ' + (opts.worst ? 'the largest' : 'the mean') + ' of the ranks in each bin.'));
  }
  var msFormat = function (v) { return v === null ? 'n/a' : fmtNs(v * 1e6); };

  /* ---- the headline ---- */
  var inputs = D.inputs;
  document.getElementById('title').textContent = 'trainprof report: ' + document.title;
  document.getElementById('facts').textContent =
    [inputs.traces.length + ' trace' + (inputs.traces.length === 1 ? '' : 's'),
     inputs.snapshots.length + ' memory snapshot' + (inputs.snapshots.length === 1 ? '' : 's'),
     inputs.logs.length + ' log' + (inputs.logs.length === 1 ? '' : 's'),
     'trainprof ' + D.report.trainprof].join(' · ');

  var headline = section('headline', 'Headline');
  var cards = el('div', { 'class': 'cards' });
  headline.appendChild(cards);
  var evidence = {}; /* rule -> section id */
  function ruleSection(rule) {
    if (/^path-/.test(rule)) return 'critical-path';
    if (/comm|network|overlap|collective|nccl/.test(rule)) return 'communication';
    if (/rank|straggler|skew/.test(rule)) return 'ranks';
    if (/mem|oom|frag/.test(rule)) return 'memory';
    if (/step|data|phase/.test(rule)) return 'steps';
    return 'gpu';
  }

  if (traces.length) {
    var stepMeans = traces.filter(function (t) { return t.steps && t.steps.count; }).map(function (t) { return t.steps.mean_ns; });
    if (stepMeans.length) {
      stepMeans.sort(function (a, b) { return a - b; });
      card(cards, traces.length > 1 ? 'mean step time, median rank' : 'mean step time', fmtNs(stepMeans[Math.floor((stepMeans.length - 1) / 2)]));
    }
    /* one trace's figure, or the median rank's of many */
    var median = function (vals) {
      vals = vals.filter(function (v) { return v !== null && v !== undefined && !isNaN(v); }).sort(function (a, b) { return a - b; });
      return vals.length ? vals[Math.floor((vals.length - 1) / 2)] : null;
    };
    var of = traces.length > 1 ? ', median rank' : '';
    var idle = median(traces.map(function (t) { return t.temporal && t.temporal.span_ns ? share(t.temporal.idle_ns, t.temporal.span_ns) : null; }));
    if (idle !== null) card(cards, 'GPU idle' + of, fmtPct(idle));
    var ov = median(traces.map(function (t) { return t.communication && t.communication.comm_ns ? t.communication.overlap : null; }));
    if (ov !== null) card(cards, 'communication overlapped' + of, fmtPct(ov));
    var M = D.mfu && D.mfu.steps && D.mfu.steps[0];
    if (M) card(cards, 'MFU at that step time (' + D.mfu.model_type + ', ' + (D.mfu.device || D.mfu.peak_tflops + ' TFLOP/s') + ')', fmtPct(M.mfu));
    if (S.critical_path && S.critical_path.windows) card(cards, 'critical path, share of the step', fmtPct(S.critical_path.path_share));
    if (straggler !== null && straggler !== undefined) card(cards, 'straggler', 'rank ' + straggler);
  }
  if (D.mfu && D.mfu.steps && D.mfu.steps[0]) {
    var m0 = D.mfu.steps[0];
    headline.appendChild(el('p', { 'class': 'note', id: 'mfu' },
      'MFU (trainprof mfu): ' + D.mfu.model_type + ' from ' + D.mfu.config + ', ' + (D.mfu.flops_per_step / 1e12).toPrecision(4) + ' TFLOP per step and rank (' +
      D.mfu.tokens_per_rank + ' tokens), at the median rank\u2019s mean step time ' + fmtNs(D.mfu_step_time_ns) + ': ' +
      fmtNum(m0.tflops_per_gpu, 1) + ' TFLOP/s per GPU against a peak of ' + D.mfu.peak_tflops + ' TFLOP/s, MFU ' + fmtPct(m0.mfu) + '.'));
  }
  var truncated = traces.filter(function (t) { return t.truncated; });
  if (truncated.length)
    headline.appendChild(el('p', { 'class': 'bad' }, 'Truncated: ' + truncated.map(rankLabel).join(', ') + ' (each analysed up to where it ends)'));
  var findings = S && S.advice ? S.advice : [];
  headline.appendChild(el('h3', null, 'Advice (' + findings.length + ' finding' + (findings.length === 1 ? '' : 's') + ' over the documented thresholds)'));
  /* RANKS (sorted numbers) as runs: "ranks 0-3, 8, 10-12" */
  function rankRuns(ranks) {
    var out = [], i = 0;
    while (i < ranks.length) {
      var j = i;
      while (j + 1 < ranks.length && ranks[j + 1] === ranks[j] + 1) j++;
      out.push(j > i ? ranks[i] + '-' + ranks[j] : String(ranks[i]));
      i = j + 1;
    }
    return (ranks.length === 1 ? 'rank ' : 'ranks ') + (out.length > 6 ? out.slice(0, 6).join(', ') + ', ... (' + ranks.length + ' ranks)' : out.join(', '));
  }
  if (findings.length) {
    /* one line per rule and remedy, naming its ranks, with the evidence of
     * the rank where its number is highest (as trainprof advice prints it);
     * every rank's evidence under it */
    var groupsF = [], byKey = {};
    findings.forEach(function (f) {
      var k = f.rule + '\u0000' + (f.remedy || '');
      if (!byKey[k]) { byKey[k] = { rule: f.rule, remedy: f.remedy, items: [] }; groupsF.push(byKey[k]); }
      byKey[k].items.push(f);
    });
    var ul = el('ul', { 'class': 'findings', id: 'findings' });
    groupsF.forEach(function (g) {
      var top = g.items.reduce(function (a, b) { return (b.value || 0) > (a.value || 0) ? b : a; });
      var rs = g.items.map(function (f) { return f.rank; }).filter(function (r) { return r !== undefined && r !== null && r >= 0; }).sort(function (a, b) { return a - b; });
      var li = el('li');
      li.appendChild(el('span', { 'class': 'rule' }, g.rule));
      var who = rs.length ? rankRuns(rs) + (rs.length > 1 && top.rank >= 0 ? ' (highest: rank ' + top.rank + ')' : '') + ': ' : '';
      li.appendChild(document.createTextNode(' ' + who + top.evidence + ' '));
      var sec = ruleSection(g.rule);
      evidence[g.rule] = sec;
      li.appendChild(el('a', { href: '#' + sec, 'data-evidence': sec }, '(evidence)'));
      if (g.remedy) li.appendChild(el('div', { 'class': 'remedy' }, 'remedy: ' + g.remedy));
      if (g.items.length > 1) {
        var det = el('details'), sum = el('summary', null, 'each rank (' + g.items.length + ')'), inner = el('ul');
        det.appendChild(sum);
        g.items.forEach(function (f) { inner.appendChild(el('li', null, (f.rank >= 0 ? 'rank ' + f.rank + ': ' : '') + f.evidence)); });
        det.appendChild(inner);
        li.appendChild(det);
      }
      ul.appendChild(li);
    });
    headline.appendChild(ul);
  } else {
    headline.appendChild(el('p', { 'class': 'note' }, traces.length ? 'No rule is over its threshold (docs/METRICS.md, "trainprof advice").' : 'No trace was given: advice needs one.'));
  }

  /* ---- steps: each rank's step times, and the phase split ---- */
  var eachStep = function (t) { return (t.steps && t.steps.each) || []; };
  if (traces.some(function (t) { return eachStep(t).length; })) {
    var sec = section('steps', 'Step time', 'Each ProfilerStep of each rank (its CPU span, as trainprof steps gives it). Ranks past ' + MAX_ROWS + ' are binned: a bin shows its slowest rank.');
    var stepNums = [], seen = {};
    traces.forEach(function (r) { eachStep(r).forEach(function (s) { if (!seen[s.number]) { seen[s.number] = 1; stepNums.push(s.number); } }); });
    stepNums.sort(function (a, b) { return a - b; });
    var col = {};
    stepNums.forEach(function (n, i) { col[n] = i; });
    var rows = traces.map(rankLabel), b = bins(rows.length), cells = [], vmax = 0, vmin = Infinity;
    var holdsStraggler = function (x) { for (var i = x[0]; i < x[1]; i++) if (isStraggler(traces[i])) return true; return false; };
    var rowNames = b ? b.map(function (x) { return rows[x[0]] + ' .. ' + rows[x[1] - 1] + (holdsStraggler(x) ? ' (straggler)' : ''); }) : rows.map(function (r, i) {
      var t = traces[i];
      return t && isStraggler(t) ? r + ' (straggler)' : r;
    });
    var grid = rowNames.map(function () { return stepNums.map(function () { return null; }); });
    traces.forEach(function (r, i) {
      var row = b ? b.findIndex(function (x) { return i >= x[0] && i < x[1]; }) : i;
      eachStep(r).forEach(function (s) {
        var c = col[s.number], cur = grid[row][c];
        if (cur === null || s.dur_ns > cur) grid[row][c] = s.dur_ns;
      });
    });
    grid.forEach(function (r, i) { r.forEach(function (v, j) { if (v !== null) { cells.push([j, i, v / 1e6]); vmax = Math.max(vmax, v / 1e6); vmin = Math.min(vmin, v / 1e6); } }); });
    chart(sec, 'chart-steps', {
      tooltip: { trigger: 'item', formatter: function (p) { return esc(rowNames[p.value[1]]) + ', step ' + stepNums[p.value[0]] + ': ' + fmtNs(p.value[2] * 1e6); } },
      grid: { left: 150, right: 90, top: 30, bottom: 60 },
      xAxis: { type: 'category', name: 'ProfilerStep', nameLocation: 'middle', nameGap: 30, data: stepNums.map(String) },
      yAxis: { type: 'category', data: rowNames, inverse: true },
      visualMap: { min: vmin === Infinity ? 0 : vmin, max: vmax || 1, calculable: true, orient: 'vertical', right: 10, top: 'middle', text: ['ms', ''], dimension: 2, inRange: { color: ['#9ecae1', '#3182bd', '#c0392b'] } },
      series: [{ name: 'step time (ms)', type: 'heatmap', data: cells, emphasis: { itemStyle: { borderColor: '#000', borderWidth: 1 } } }]
    }, rowNames.length > 16);
    if (traces.length) {
      sec.appendChild(el('h3', null, 'Phase split (GPU time per phase, all steps)'));
      var phases = ['data', 'forward', 'backward', 'optimizer', 'other'];
      rankBars(sec, 'chart-phases', traces, rankLabel, phases.map(function (p) {
        return { name: p, value: function (t) { var x = t.phases && t.phases[p]; return x ? x.gpu_ns / 1e6 : 0; } };
      }), { stack: 'phase', yName: 'GPU time (ms)', format: msFormat });
    }
    /* each step split into its phases: its CPU span by phase marker (as
       trainprof steps splits it), the mean over the ranks that have the step */
    var phaseKeys = ['data', 'forward', 'backward', 'optimizer', 'other'];
    var perStep = stepNums.map(function (n) { return { number: n, sums: {}, n: 0 }; });
    traces.forEach(function (t) {
      eachStep(t).forEach(function (s) {
        if (s.other_ns === undefined) return; /* no phase markers in that trace */
        var ps = perStep[col[s.number]];
        ps.n++;
        phaseKeys.forEach(function (p) { ps.sums[p] = (ps.sums[p] || 0) + (s[p + '_ns'] || 0); });
      });
    });
    var split = perStep.filter(function (x) { return x.n; });
    if (split.length) {
      sec.appendChild(el('h3', null, 'Each step by phase (CPU time, the mean over the ranks)'));
      chart(sec, 'chart-step-phases', {
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: msFormat },
        legend: { top: 5 },
        grid: { left: 70, right: 30, top: 40, bottom: 70 },
        xAxis: { type: 'category', name: 'ProfilerStep', nameLocation: 'middle', nameGap: 30, data: split.map(function (x) { return String(x.number); }) },
        yAxis: { type: 'value', name: 'CPU time (ms)' },
        dataZoom: [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 8 }],
        series: phaseKeys.map(function (p) {
          return { name: p, type: 'bar', stack: 'step', data: split.map(function (x) { return x.sums[p] / x.n / 1e6; }) };
        })
      });
    }
  }

  /* ---- GPU time ---- */
  if (traces.length) {
    var g = section('gpu', 'GPU time', 'Idle, compute and non-compute time of each rank\u2019s GPU over its steps (trainprof temporal, as summary prints it), then the top kernels, ops and nn.Modules.');
    var spanShare = function (k) { return function (t) { var tt = t.temporal; return tt && tt.span_ns ? 100 * tt[k] / tt.span_ns : null; }; };
    rankBars(g, 'chart-gpu', traces, rankLabel, [
      { name: 'compute', color: '#4e79a7', value: spanShare('compute_ns') },
      { name: 'non-compute', color: '#f28e2b', value: spanShare('non_compute_ns') },
      { name: 'idle', color: '#bab0ac', value: spanShare('idle_ns') }
    ], { stack: 'gpu', yName: 'share of the span (%)', yMax: 100, format: function (v) { return v === null ? 'n/a' : v.toFixed(1) + '%'; } });
    if (S.top_kernels && S.top_kernels.length) {
      g.appendChild(el('h3', null, 'Top kernels (all ranks)'));
      table(g, 'table-kernels', [
        { key: 'name', title: 'kernel', name: true }, { key: 'class', title: 'class' },
        { key: 'count', title: 'count', num: true }, { key: 'total_ns', title: 'total', num: true, fmt: fmtNs },
        { key: 'share', title: 'share', num: true, fmt: fmtPct }], S.top_kernels, true);
    }
    if (S.top_ops && S.top_ops.length) {
      g.appendChild(el('h3', null, 'Top ops (all ranks; direct kernel time)'));
      table(g, 'table-ops', [
        { key: 'op', title: 'op', name: true }, { key: 'count', title: 'count', num: true },
        { key: 'direct_ns', title: 'direct', num: true, fmt: fmtNs }, { key: 'share', title: 'share', num: true, fmt: fmtPct },
        { key: 'top_kernel', title: 'top kernel', name: true }], S.top_ops, true);
    }
    if (S.top_modules && S.top_modules.length) {
      g.appendChild(el('h3', null, 'Top nn.Modules (all ranks; direct kernel time, backward ops counted for their forward op\u2019s module)'));
      table(g, 'table-modules', [
        { key: 'module', title: 'module', name: true }, { key: 'count', title: 'count', num: true },
        { key: 'direct_ns', title: 'direct', num: true, fmt: fmtNs }, { key: 'share', title: 'share', num: true, fmt: fmtPct },
        { key: 'forward_direct_ns', title: 'forward', num: true, fmt: fmtNs },
        { key: 'backward_direct_ns', title: 'backward', num: true, fmt: fmtNs },
        { key: 'recompute_direct_ns', title: 'recompute', num: true, fmt: fmtNs },
        { key: 'top_kernel', title: 'top kernel', name: true }], S.top_modules, true);
    }
  }

  /* the roofline of the top ops: each modelled op at its arithmetic
   * intensity and achieved TFLOP/s (`ops`' performance model), under the
   * device's roof for each dtype present: min(peak, intensity x bandwidth) */
  var RD = S && S.roofline_device, modelled = S && S.top_ops ? S.top_ops.filter(function (o) { return o.tflops > 0 && o.intensity > 0; }) : [];
  if (RD && RD.peak_tbps && modelled.length) {
    var gs = document.getElementById('gpu');
    gs.appendChild(el('h3', null, 'Roofline of the top ops (' + RD.device + ', ' + (RD.peak_source || 'datasheet') + ' peaks)'));
    var dtypes = [], series = [];
    modelled.forEach(function (o) { if (dtypes.indexOf(o.dtype) < 0) dtypes.push(o.dtype); });
    var xs = modelled.map(function (o) { return o.intensity; });
    var xmin = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, xs)) - 1)), xmax = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, xs)) + 1));
    dtypes.forEach(function (dt) {
      var peak = RD['peak_tflops_' + dt];
      if (!peak) return;
      var ridge = peak / RD.peak_tbps, line = [[xmin, xmin * RD.peak_tbps]];
      if (ridge > xmin && ridge < xmax) line.push([ridge, peak]);
      line.push([xmax, Math.min(peak, xmax * RD.peak_tbps)]);
      series.push({ name: 'roof ' + dt + ' (' + peak + ' TFLOP/s, ' + RD.peak_tbps + ' TB/s)', type: 'line', data: line, showSymbol: false, silent: true, lineStyle: { type: 'dashed' } });
    });
    dtypes.forEach(function (dt) {
      series.push({ name: 'ops ' + dt, type: 'scatter', data: modelled.filter(function (o) { return o.dtype === dt; }).map(function (o) {
        return { value: [o.intensity, o.tflops], name: o.op, op: o };
      }), symbolSize: function (v, p) { return 6 + 18 * Math.sqrt(p.data.op.share || 0); } });
    });
    chart(gs, 'chart-roofline', {
      tooltip: { trigger: 'item', formatter: function (p) {
        if (!p.data || !p.data.op) return esc(p.seriesName);
        var o = p.data.op;
        return esc(o.op) + '<br>' + fmtNum(o.tflops, 1) + ' TFLOP/s, ' + fmtNum(o.tbps, 2) + ' TB/s, ' + fmtNum(o.intensity, 1) + ' FLOP/B<br>' +
          fmtPct(o.roofline) + ' of the roofline (' + esc(o.bound || '') + '-bound), ' + fmtNs(o.direct_ns) + ' direct';
      } },
      legend: { type: 'scroll', top: 5 },
      grid: { left: 90, right: 30, top: 50, bottom: 60 },
      xAxis: { type: 'log', name: 'arithmetic intensity (FLOP/byte)', nameLocation: 'middle', nameGap: 30, min: xmin, max: xmax },
      yAxis: { type: 'log', name: 'achieved TFLOP/s' },
      series: series
    }, true);
    gs.appendChild(el('p', { 'class': 'note' }, 'Ops with a performance model (GEMM, attention, convolution, elementwise and normalization ops with recorded shapes; trainprof ops), sized by their share of direct kernel time; the dashed lines are the roof for each dtype.'));
  }

  /* ---- communication and the critical path ---- */
  var withComm = traces.filter(function (t) { return t.communication && t.communication.comm_ns; });
  if (withComm.length) {
    var cs = section('communication', 'Communication', 'Communication kernel time of each rank, split into the part overlapped by compute and the exposed part (trainprof comm).');
    var commMs = function (k) { return function (t) { var c = t.communication; return c ? (c[k] || 0) / 1e6 : null; }; };
    rankBars(cs, 'chart-comm', traces, rankLabel, [
      { name: 'overlapped', color: '#59a14f', value: commMs('overlap_ns') },
      { name: 'exposed', color: '#e15759', value: commMs('exposed_ns') }
    ], { stack: 'comm', yName: 'time (ms)', format: msFormat });
    /* per collective type, all ranks: its time overlapped and exposed */
    var byType = {}, typeNames = [];
    traces.forEach(function (t) {
      ((t.communication && t.communication.types) || []).forEach(function (y) {
        if (!byType[y.type]) { byType[y.type] = { time: 0, exposed: 0 }; typeNames.push(y.type); }
        byType[y.type].time += y.time_ns;
        byType[y.type].exposed += y.exposed_ns;
      });
    });
    if (typeNames.length) {
      cs.appendChild(el('h3', null, 'Overlapped and exposed, per collective type (all ranks, summed)'));
      chart(cs, 'chart-comm-types', {
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: function (v) { return fmtNs(v * 1e6); } },
        legend: { top: 5 },
        grid: { left: 130, right: 40, top: 40, bottom: 50 },
        xAxis: { type: 'value', name: 'time (ms)', nameLocation: 'middle', nameGap: 28 },
        yAxis: { type: 'category', data: typeNames, inverse: true },
        series: [
          { name: 'overlapped', type: 'bar', stack: 'c', data: typeNames.map(function (n) { return (byType[n].time - byType[n].exposed) / 1e6; }), itemStyle: { color: '#59a14f' } },
          { name: 'exposed', type: 'bar', stack: 'c', data: typeNames.map(function (n) { return byType[n].exposed / 1e6; }), itemStyle: { color: '#e15759' } }
        ]
      });
    }
    var callRows = [];
    traces.forEach(function (t) {
      ((t.communication && t.communication.calls) || []).forEach(function (c) {
        callRows.push({ rank: rankLabel(t), name: c.name, calls: c.calls, bytes: c.bytes, busbw_gbps: c.busbw_gbps });
      });
    });
    if (callRows.length) {
      cs.appendChild(el('h3', null, 'Collectives per rank'));
      table(cs, 'table-collectives', [
        { key: 'rank', title: 'rank' }, { key: 'name', title: 'collective', name: true }, { key: 'calls', title: 'calls', num: true },
        { key: 'bytes', title: 'bytes', num: true, fmt: fmtBytes }, { key: 'busbw_gbps', title: 'busbw (GB/s)', num: true, fmt: function (v) { return fmtNum(v, 1); } }],
        callRows, true);
    }
    var CW = S.collective_waits || [];
    if (CW.length) {
      cs.appendChild(el('h3', null, 'Waits per rank (collectives matched across ranks)'));
      rankBars(cs, 'chart-waits', CW, function (r) { return 'rank ' + r.rank + (r.straggler ? ' (straggler)' : ''); }, [
        { name: 'its wait in collectives', color: '#f28e2b', value: function (r) { return (r.wait_per_step_ns || 0) / 1e6; } },
        { name: 'the others\u2019 wait for it (cost, all steps)', color: '#e15759', value: function (r) { return (r.cost_ns || 0) / 1e6; } }
      ], { yName: 'time per step (ms)', worst: true, format: msFormat });
    }
    var CG = S.collectives || [];
    if (CG.length) {
      cs.appendChild(el('h3', null, 'Collectives matched across ranks (trainprof collectives)'));
      table(cs, 'table-matched', [
        { key: 'type', title: 'collective' }, { key: 'group', title: 'group' }, { key: 'dtype', title: 'dtype' },
        { key: 'bytes', title: 'size', num: true, fmt: fmtBytes }, { key: 'group_size', title: 'ranks', num: true },
        { key: 'count', title: 'instances', num: true }, { key: 'transfer_ns', title: 'transfer', num: true, fmt: fmtNs },
        { key: 'busbw', title: 'busbw (GB/s)', num: true, fmt: function (v) { return fmtNum(v, 1); } },
        { key: 'wait_ns', title: 'waits', num: true, fmt: fmtNs },
        { key: 'skew_p50_ns', title: 'arrival skew p50', num: true, fmt: fmtNs }, { key: 'skew_p90_ns', title: 'skew p90', num: true, fmt: fmtNs }],
        CG, true);
    }
    if (ranksView && ranksView.collectives_matched) {
      var p = el('p', { 'class': 'note' });
      p.textContent = ranksView.collectives_matched + ' collectives matched across ranks (trainprof collectives); ' +
        (ranksView.collectives_straggler !== null && ranksView.collectives_straggler !== undefined
          ? 'the straggler is rank ' + ranksView.collectives_straggler + ', last to arrive in ' + (100 * ranksView.collectives_last_share).toFixed(0) + '% of the collectives the others wait in' +
            (ranksView.collectives_top ? ' (most: ' + ranksView.collectives_top + ')' : '') + ', ' + fmtNs(ranksView.collectives_cost_per_step_ns) + ' per step of their waiting' +
            (ranksView.collectives_straggler_cause ? '; late because of its ' + ({ compute: 'GPU (the work queued ahead of its collectives)', data: 'data loading', host: 'host (its CPU work before the calls)' })[ranksView.collectives_straggler_cause] : '')
          : 'no rank waits for another');
      cs.appendChild(p);
    }
  }
  var CP = S && S.critical_path;
  if (CP && CP.windows) {
    var cp = section('critical-path', 'Critical path', 'What bounds the sampled steps (trainprof critical-path on ' + CP.windows + ' step' + (CP.windows === 1 ? '' : 's') + '): the path is ' + fmtPct(CP.path_share) + ' of the step.');
    var kinds = [['compute_ns', 'GPU compute'], ['memory_ns', 'memory copies'], ['comm_ns', 'communication'], ['kernel_gap_ns', 'gaps between kernels'],
                 ['launch_ns', 'launch'], ['runtime_ns', 'CUDA runtime'], ['cpu_op_ns', 'CPU ops']];
    chart(cp, 'chart-critical-path', {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: function (v) { return fmtNs(v * 1e6); } },
      grid: { left: 170, right: 40, top: 20, bottom: 50 },
      xAxis: { type: 'value', name: 'time on the path (ms)', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: kinds.map(function (k) { return k[1]; }), inverse: true },
      series: [{ name: 'on the path', type: 'bar', data: kinds.map(function (k) { return (CP[k[0]] || 0) / 1e6; }), itemStyle: { color: '#76b7b2' } }]
    });
  }

  /* ---- ranks ---- */
  if (traces.length > 1) {
    var rs = section('ranks', 'Ranks', 'Every rank side by side (sortable; type to filter).');
    table(rs, 'table-ranks', [
      { key: 'label', title: 'rank' }, { key: 'steps', title: 'steps', num: true }, { key: 'mean', title: 'mean step', num: true, fmt: fmtNs },
      { key: 'idle', title: 'GPU idle', num: true, fmt: fmtPct }, { key: 'compute', title: 'compute', num: true, fmt: fmtPct },
      { key: 'exposed', title: 'exposed comm', num: true, fmt: fmtNs }, { key: 'file', title: 'file', name: true }],
      traces.map(function (t) {
        var tt = t.temporal || {}, c = t.communication || {};
        return { label: rankLabel(t) + (isStraggler(t) ? ' (straggler)' : ''), steps: t.steps ? t.steps.count : null, mean: t.steps && t.steps.count ? t.steps.mean_ns : null,
                 idle: tt.span_ns ? tt.idle_ns / tt.span_ns : null, compute: tt.span_ns ? tt.compute_ns / tt.span_ns : null,
                 exposed: c.exposed_ns === undefined ? null : c.exposed_ns, file: t.file };
      }), true);
    if (ranksView) {
      var rp = el('p', { 'class': 'note' });
      rp.textContent = 'Step-time skew across ranks: max ' + fmtNs(ranksView.skew_max_ns) + ', mean ' + fmtNs(ranksView.skew_mean_ns) + ' over ' + ranksView.common_steps + ' common steps.';
      rs.appendChild(rp);
    }
  }

  /* A call site ("file:line:function;..." outermost first, as trainprof mem
   * writes it) by its functions, innermost first: "arena_floats < train_step
   * < run". */
  function siteName(site) {
    if (site === 'other' || site.indexOf(';') < 0 && site.indexOf(':') < 0) return site;
    var fns = site.split(';').map(function (f) { var k = f.lastIndexOf(':'); return k >= 0 ? f.substring(k + 1) : f; });
    var s = fns.reverse().slice(0, 4).join(' < ');
    return fns.length > 4 ? s + ' < ...' : s;
  }

  /* ---- before / after (--vs): trainprof diff, base -> this run ---- */
  var DF = D.diff;
  if (DF && DF.metrics) {
    var ba = section('before-after', 'Before / after', 'This run against the base run (--vs; trainprof diff, per step): ' +
      DF.base.traces + ' base trace' + (DF.base.traces === 1 ? '' : 's') + ' (' + D.inputs.base.join(', ') + ') against ' +
      DF.candidate.traces + '. Positive: more time in this run.');
    var ms2 = DF.metrics.filter(function (m) { return m.base !== null && m.candidate !== null && (m.base || m.candidate); });
    chart(ba, 'chart-diff', {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, formatter: function (ps) {
        var m = ms2[ps[0].dataIndex];
        return esc(m.name) + ': ' + fmtNs(m.base) + ' \u2192 ' + fmtNs(m.candidate) + ' (' + (m.delta_pct >= 0 ? '+' : '') + fmtNum(m.delta_pct, 1) + '%)';
      } },
      grid: { left: 130, right: 40, top: 20, bottom: 50 },
      xAxis: { type: 'value', name: 'change per step (%)', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: ms2.map(function (m) { return m.name; }), inverse: true },
      series: [{ name: 'change', type: 'bar', data: ms2.map(function (m) {
        return { value: m.delta_pct, itemStyle: { color: m.delta_pct > 0 ? '#e15759' : '#59a14f' } };
      }) }]
    }, true);
    table(ba, 'table-diff-metrics', [
      { key: 'name', title: 'per step' }, { key: 'base', title: 'base', num: true, fmt: fmtNs },
      { key: 'candidate', title: 'this run', num: true, fmt: fmtNs }, { key: 'delta', title: 'change', num: true, fmt: fmtNs },
      { key: 'delta_pct', title: 'change %', num: true, fmt: function (v) { return (v >= 0 ? '+' : '') + fmtNum(v, 1) + '%'; } }], ms2, false);
    var K = DF.kernels || {}, krow = function (k) {
      return { name: k.name, cls: k['class'], base: k.base ? k.base.total_per_step_ns : null, cand: k.candidate ? k.candidate.total_per_step_ns : null,
               delta: k.delta_per_step_ns, pct: k.delta_pct };
    };
    var kcols = [{ key: 'name', title: 'kernel', name: true }, { key: 'cls', title: 'class' }, { key: 'base', title: 'base per step', num: true, fmt: fmtNs },
                 { key: 'cand', title: 'this run', num: true, fmt: fmtNs }, { key: 'delta', title: 'change', num: true, fmt: fmtNs },
                 { key: 'pct', title: 'change %', num: true, fmt: function (v) { return (v >= 0 ? '+' : '') + fmtNum(v, 1) + '%'; } }];
    if (K.regressions && K.regressions.length) {
      ba.appendChild(el('h3', null, 'Kernels that take longer'));
      table(ba, 'table-diff-regressions', kcols, K.regressions.map(krow), true);
    }
    if (K.improvements && K.improvements.length) {
      ba.appendChild(el('h3', null, 'Kernels that take less'));
      table(ba, 'table-diff-improvements', kcols, K.improvements.map(krow), true);
    }
  }

  /* ---- memory ---- */
  if (D.memory && D.memory.length) {
    var ms = section('memory', 'Memory', 'Active memory over time from each CUDA memory snapshot, stacked by the call sites that hold the most at the peak (trainprof mem --timeline), with reserved memory; the peak and OOMs are marked. The call sites at the peak are those of trainprof mem.');
    D.memory.forEach(function (m, mi) {
      var res = m.result && m.result[0], tl = m.timeline;
      if (!res) return;
      (res.devices || []).forEach(function (dev, di) {
        ms.appendChild(el('h3', null, res.file + ', device ' + dev.device + ': peak ' + fmtBytes(dev.peak_active_bytes) + ', reserved peak ' + fmtBytes(dev.reserved_peak_bytes)));
        var tdev = tl && tl.devices ? tl.devices.filter(function (x) { return x.device === dev.device; })[0] : null;
        if (tdev && tdev.points && tdev.points.length) {
          /* a time axis where the snapshot has times (from its first
           * event; the point before the history at its start), else the
           * allocator events in order */
          var pts = tdev.points, timed = pts.every(function (p) { return p.index < 0 || p.time_us >= 0; });
          var first = pts.filter(function (p) { return p.index >= 0; })[0], t0m = timed && first ? first.time_us : 0;
          var xs = timed ? function (p) { return p.index < 0 ? 0 : (p.time_us - t0m) / 1e6; } : function (p) { return p.index + 1; };
          var series = tdev.layers.map(function (name, li) {
            return { name: siteName(name), type: 'line', stack: 'active', areaStyle: {}, showSymbol: false, step: 'end',
                     lineStyle: { width: 0.5 }, data: pts.map(function (p) { return [xs(p), p.layer_bytes[li] / 1048576]; }) };
          });
          series.push({ name: 'reserved', type: 'line', showSymbol: false, step: 'end', lineStyle: { type: 'dashed', color: '#333' }, itemStyle: { color: '#333' },
                        data: pts.map(function (p) { return [xs(p), p.reserved_bytes / 1048576]; }) });
          var peak = pts.filter(function (p) { return p.index === dev.peak_index; })[0];
          var marks = [];
          if (peak) marks.push({ name: 'peak', xAxis: xs(peak), label: { formatter: 'peak ' + fmtBytes(dev.peak_active_bytes) } });
          (dev.ooms || []).forEach(function (o) {
            var at = timed ? (o.time_us >= 0 ? (o.time_us - t0m) / 1e6 : null) : (o.index >= 0 ? o.index + 1 : null);
            if (at !== null && at !== undefined && !isNaN(at)) marks.push({ name: 'OOM', xAxis: at, lineStyle: { color: '#c0392b' }, label: { formatter: 'OOM' } });
          });
          /* ProfilerStep starts where a trace shares the snapshot's clock
           * (the recorder writes both): its steps that fall inside the
           * snapshot's time span */
          if (timed && pts.length) {
            var tEnd = pts[pts.length - 1].time_us;
            traces.forEach(function (t) {
              if (t.base_time_ns === undefined || t.base_time_ns === null) return;
              eachStep(t).forEach(function (st) {
                var us = (t.base_time_ns + st.ts_ns) / 1000;
                if (us >= t0m && us <= tEnd)
                  marks.push({ name: 'step ' + st.number, xAxis: (us - t0m) / 1e6, lineStyle: { color: '#888', type: 'dotted' },
                               label: { formatter: 'step ' + st.number, color: '#555', position: 'start' } });
              });
            });
          }
          series[series.length - 1].markLine = { symbol: 'none', silent: true, data: marks, lineStyle: { color: '#c0392b' } };
          chart(ms, 'chart-memory-' + mi + '-' + di, {
            tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmtBytes(v * 1048576); } },
            legend: { type: 'scroll', top: 5 },
            grid: { left: 90, right: 30, top: 60, bottom: 70 },
            xAxis: { type: 'value', name: timed ? 'time since the first event (s)' : 'allocator event (the snapshot has no timestamps)', nameLocation: 'middle', nameGap: 28, min: 0, max: 'dataMax' },
            yAxis: { type: 'value', name: 'memory (MiB)' },
            dataZoom: [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 8 }],
            series: series
          }, true);
        }
        if (dev.sites_at_peak && dev.sites_at_peak.length) {
          table(ms, 'table-memory-' + mi + '-' + di, [
            { key: 'frames', title: 'call site at the peak (innermost first)' }, { key: 'site', title: 'frames (file:line:function, outermost first)', name: true }, { key: 'bytes', title: 'bytes', num: true, fmt: fmtBytes },
            { key: 'count', title: 'blocks', num: true }], dev.sites_at_peak.map(function (x) {
              return { frames: siteName(x.site), site: x.site, bytes: x.bytes, count: x.count };
            }), true);
        }
        if (dev.ooms && dev.ooms.length) ms.appendChild(el('p', { 'class': 'bad' }, dev.ooms.length + ' OOM' + (dev.ooms.length === 1 ? '' : 's') + ' on this device'));
      });
    });
  }

  /* ---- training logs ---- */
  var L = D.log_series && D.log_series.files;
  if (L && L.length) {
    var ls = section('logs', 'Training logs', 'Every metric of each log against its step (trainprof log --series), anomalies marked (trainprof log).');
    var anomaliesOf = {};
    ((D.log && D.log.files) || []).forEach(function (f) { anomaliesOf[f.file] = f.anomalies || []; });
    L.forEach(function (f, fi) {
      var rows = f.series || [];
      if (!rows.length) return;
      var names = [];
      rows.forEach(function (r) { for (var k in r) if (k !== 'step' && names.indexOf(k) < 0) names.push(k); });
      /* the losses together; each throughput, MFU, step time and grad norm
       * on its own axis (their units differ); the rest in the table */
      var groups = [{ id: 'loss', title: 'loss', keys: names.filter(function (k) { return /loss/i.test(k); }) }];
      names.forEach(function (k, i) {
        if (/loss/i.test(k)) return;
        var what = /per_s|per_sec|\/s\b|throughput|tflops|flops_achieved/i.test(k) ? 'throughput' : /mfu/i.test(k) ? 'MFU'
          : /step_time|iter_time|elapsed|time_per/i.test(k) ? 'step time' : /grad_norm/i.test(k) ? 'grad norm' : null;
        if (what) groups.push({ id: 'm' + i, title: what + ': ' + k, keys: [k] });
      });
      ls.appendChild(el('h3', null, f.file));
      groups.forEach(function (gr) {
        var ks = gr.keys;
        if (!ks.length) return;
        var an = (anomaliesOf[f.file] || []).filter(function (a) { return ks.indexOf(a.metric) >= 0; });
        var series = ks.map(function (k) {
          return { name: k, type: 'line', showSymbol: rows.length < 60, data: rows.filter(function (r) { return r[k] !== undefined && r[k] !== null && typeof r[k] === 'number'; }).map(function (r) { return [r.step, r[k]]; }),
                   markPoint: { symbol: 'pin', symbolSize: 36, itemStyle: { color: '#c0392b' },
                                data: an.filter(function (a) { return a.metric === k; }).map(function (a) {
                                  var row = rows.filter(function (r) { return r.step === a.step; })[0];
                                  return { name: a.kind, coord: [a.step, row && typeof row[k] === 'number' ? row[k] : 0], value: a.kind };
                                }) } };
        });
        chart(ls, 'chart-log-' + fi + '-' + gr.id, {
          legend: { type: 'scroll', top: 5 },
          xAxis: { type: 'value', name: 'step', nameLocation: 'middle', nameGap: 28, minInterval: 1, min: 'dataMin', max: 'dataMax' },
          yAxis: { type: 'value', name: gr.title, scale: true, nameTextStyle: { align: 'left' } },
          dataZoom: [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 8 }],
          series: series
        });
        if (an.length) {
          var ap = el('p', { 'class': 'bad' });
          ap.textContent = an.length + ' anomal' + (an.length === 1 ? 'y' : 'ies') + ': ' + an.slice(0, 8).map(function (a) { return a.kind + ' in ' + a.metric + ' at step ' + a.step; }).join('; ') + (an.length > 8 ? '; ...' : '');
          ls.appendChild(ap);
        }
      });
      var summary = ((D.log && D.log.files) || []).filter(function (x) { return x.file === f.file; })[0];
      if (summary && summary.metrics && summary.metrics.length) {
        table(ls, 'table-log-' + fi, [
          { key: 'name', title: 'metric', name: true }, { key: 'count', title: 'count', num: true },
          { key: 'mean', title: 'mean', num: true, fmt: fmtReal },
          { key: 'p50', title: 'p50', num: true, fmt: fmtReal },
          { key: 'min', title: 'min', num: true, fmt: fmtReal },
          { key: 'max', title: 'max', num: true, fmt: fmtReal },
          { key: 'steady_mean', title: 'mean after warm-up', num: true, fmt: fmtReal }],
          summary.metrics, true);
      }
    });
  }
  /* an evidence link whose section the inputs did not give (no snapshot for
   * a memory rule, one rank for a rank rule) points to the GPU time */
  document.querySelectorAll('a[data-evidence]').forEach(function (a) {
    if (!document.getElementById(a.getAttribute('data-evidence'))) {
      var to = document.getElementById('gpu') ? 'gpu' : 'headline';
      a.setAttribute('href', '#' + to);
      a.setAttribute('data-evidence', to);
    }
  });
  document.body.setAttribute('data-ready', '1');
})();
