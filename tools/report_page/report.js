// The report page: reads the report object embedded as <script id="report-data"> (its schema is
// the one `ncverify report --json` prints plus the [html] sections, tools/report_page/README.md)
// and builds the summary, the verdict table and the charts (Chart.js, inlined before this file).
//
// Charts are drawn when the section holding them is first opened, so a report of ~50 kernels
// opens quickly. Every chart canvas carries data-chart (its kind), an id, and after drawing
// data-rendered="true", data-datasets, data-points and data-inked (canvas pixels that are not
// transparent, sampled): the browser test (tools/tests/report_page_test.cpp) reads them from the
// dumped DOM. The URL hash pre-filters and opens: #family=NAME&verdict=fail&expand=all.
(function () {
  'use strict';

  const DASH = '\u2014';
  const TIMES = '\u00d7';
  const MICRO = '\u00b5s';

  // ---------------------------------------------------------------- data

  const report = JSON.parse(document.getElementById('report-data').textContent);

  // A section may be absent (the text/JSON report has no [html] sections); any other type is a
  // malformed report, which the page says loudly rather than drawing something half right.
  function section(name) {
    const value = report[name];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new Error('report.' + name + ' is not an array');
    return value;
  }
  const checks = section('checks');
  const links = section('links');
  const proofs = section('proofs');
  const latency = section('latency');
  const footprint = section('footprint');
  const timelines = section('timelines');

  const familyOf = (row) => row.family || '(no family)';
  const isNumber = (v) => typeof v === 'number' && isFinite(v);
  // A ratio in the JSON is a number, "inf" (an unbounded error) or null (a run error).
  const ratio = (v) => (isNumber(v) ? v : v === 'inf' ? Infinity : null);

  function orderedUnique(values) {
    const seen = new Set();
    const out = [];
    for (const v of values) {
      if (!seen.has(v)) {
        seen.add(v);
        out.push(v);
      }
    }
    return out;
  }

  const everyRow = [].concat(checks, links, proofs, latency, footprint, timelines);
  const families = orderedUnique(everyRow.map(familyOf));
  const kernelsOf = new Map(families.map((f) => [f, []]));
  for (const r of [].concat(checks, proofs, latency, footprint, timelines)) {
    if (r.kernel) kernelsOf.get(familyOf(r)).push(r.kernel);
  }
  for (const f of families) kernelsOf.set(f, orderedUnique(kernelsOf.get(f)));
  const generations = orderedUnique(everyRow.map((r) => r.gen).filter(Boolean)).sort();

  // The rewrite chain: kernel -> the kernel it replaces.
  const predecessorOf = new Map();
  for (const r of [].concat(checks, links, latency)) {
    const p = r.predecessor || r.rewrites;
    if (r.kernel && p) predecessorOf.set(r.kernel, p);
  }
  // Depth in its chain (0 for a kernel that replaces nothing) and the chain's root.
  function chainPosition(kernel) {
    let depth = 0;
    let k = kernel;
    const seen = new Set([k]);
    while (predecessorOf.has(k) && !seen.has(predecessorOf.get(k))) {
      k = predecessorOf.get(k);
      seen.add(k);
      depth++;
    }
    return { root: k, depth: depth };
  }

  // ---------------------------------------------------------------- DOM helpers

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }

  // An id fragment from a name (kernel and family names are identifiers already).
  const slug = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, '_');

  function fmt(v, digits) {
    if (v === Infinity) return 'inf';
    if (!isNumber(v)) return DASH;
    // Three significant digits without trailing zeros (0.03, 35.2, 410).
    return Math.abs(v) >= 1000 ? v.toFixed(0) : String(Number(v.toPrecision(digits || 3)));
  }

  // "seqlen=1024 d_head=64": seqlen first, the rest in the object's order.
  function paramsText(params) {
    const entries = Object.entries(params || {});
    entries.sort((a, b) => (b[0] === 'seqlen') - (a[0] === 'seqlen'));
    return entries.map(([k, v]) => k + '=' + v).join(' ');
  }

  function optionsText(options) {
    const s = paramsText(options);
    return s === '' ? 'defaults' : s;
  }

  // Tableau 10, then darker shades of it: distinguishable, readable on white (a rewrite chain
  // can have a dozen kernels).
  const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#bab0ac', '#2c4a6e', '#a35a12', '#9b2c2e', '#3f7f7a', '#2f6b28',
    '#a08a1c', '#6e4266', '#b8626f', '#5e4535', '#6f6963'];
  const DASHES = [[], [7, 4], [2, 3], [10, 3, 2, 3]];
  const genDash = (gen) => DASHES[Math.max(0, generations.indexOf(gen)) % DASHES.length];
  const VERDICT_TEXT = { pass: 'PASS', fail: 'FAIL', unknown: 'UNKNOWN' };

  // ---------------------------------------------------------------- verdicts

  // A check row that did not pass is unknown when no case failed (an undefined result, spills:
  // the row's "verdict"), else a failure.
  function checkVerdict(r) {
    if (r.pass) return 'pass';
    return r.verdict === 'unknown' ? 'unknown' : 'fail';
  }
  function linkVerdict(r) {
    if (r.pass) return 'pass';
    return String(r.status || '').toLowerCase() === 'unknown' ? 'unknown' : 'fail';
  }
  function proofVerdict(r) {
    if ((r.counterexample || 0) > 0) return 'fail';
    if ((r.unknown || 0) > 0) return 'unknown';
    if (r.pass === false) return 'fail';
    return 'pass';
  }

  function speedupText(r) {
    const pred = r.predecessor || r.rewrites || 'predecessor';
    if (!isNumber(r.speedup)) {
      // A predecessor without a latency at this shape: say so rather than a bare dash.
      return r.predecessor_latency_error ? 'no latency of ' + pred + ': ' +
          r.predecessor_latency_error : DASH;
    }
    return r.speedup.toFixed(2) + TIMES + ' vs ' + pred + ' (' +
        fmt(r.predecessor_latency_us) + ' ' + MICRO + ')';
  }

  function latencyCell(r) {
    if (isNumber(r.latency_us)) return el('td', { class: 'num', text: fmt(r.latency_us) });
    return el('td', { class: 'num', title: r.latency_error || 'no latency', text: DASH });
  }

  // One table row (plus the replay row of a failure) per check, link and proof.
  function verdictRows() {
    const rows = [];
    for (const r of checks) {
      const worst = ratio(r.worst_normalized);
      const n = Array.isArray(r.cases) ? r.cases.length : 0;
      const contract = r.contract && r.contract.name ? r.contract.name : '?';
      let detail = 'worst ' + fmt(worst) + ' of bound, contract ' + contract + ', ' + n +
          ' case' + (n === 1 ? '' : 's');
      if (r.latency_error) detail += '; latency: ' + r.latency_error;
      rows.push({ row: r, kind: 'check', verdict: checkVerdict(r),
        variant: (r.mask ? r.mask + ' \u00b7 ' : '') + paramsText(r.params), detail: detail,
        latency: true, speedup: speedupText(r) });
    }
    for (const r of links) {
      let detail = 'claim ' + (r.claim || '?') + ', level ' + (r.level || '?') + ', ' +
          (r.status || '?');
      if (r.error) detail += ': ' + r.error;
      rows.push({ row: r, kind: 'equiv', verdict: linkVerdict(r),
        variant: 'vs ' + (r.rewrites || '?') + ' \u00b7 ' + optionsText(r.options),
        detail: detail, latency: true, speedup: speedupText(r) });
    }
    for (const r of proofs) {
      let detail = (r.proved || 0) + ' of ' + (r.obligations || 0) + ' obligations proved over ' +
          (r.programs || 0) + ' programs';
      if (r.counterexample) detail += ', ' + r.counterexample + ' counterexample(s)';
      if (r.unknown) detail += ', ' + r.unknown + ' unknown';
      rows.push({ row: r, kind: 'prove', verdict: proofVerdict(r), variant: 'every program',
        detail: detail, latency: false, speedup: DASH });
    }
    return rows;
  }

  // ---------------------------------------------------------------- header

  function countBy(list, verdict) {
    const c = { pass: 0, fail: 0, unknown: 0 };
    for (const r of list) c[verdict(r)]++;
    return c;
  }

  function countsText(name, c) {
    let s = name + ': ' + c.pass + ' pass, ' + c.fail + ' fail';
    if (c.unknown) s += ', ' + c.unknown + ' unknown';
    return s;
  }

  function buildHeader() {
    const header = document.getElementById('summary');
    const pass = report.pass === true;
    header.appendChild(el('h1', {}, 'ncverify report ',
        el('span', { class: 'badge ' + (pass ? 'pass' : 'fail'), id: 'overall-verdict',
          text: pass ? 'PASS' : 'FAIL' })));
    const counts = el('ul', { class: 'counts', id: 'summary-counts' });
    counts.appendChild(el('li', { 'data-kind': 'check',
      text: countsText('checks', countBy(checks, checkVerdict)) }));
    counts.appendChild(el('li', { 'data-kind': 'equiv',
      text: countsText('equivalence links', countBy(links, linkVerdict)) }));
    counts.appendChild(el('li', { 'data-kind': 'prove',
      text: countsText('proofs', countBy(proofs, proofVerdict)) }));
    header.appendChild(counts);
    header.appendChild(el('p', { class: 'meta' }, 'generated ',
        el('time', { text: report.generated || DASH }), ' by ',
        el('code', { text: report.command || DASH })));
    const missing = ['latency', 'footprint', 'timelines'].filter((s) => section(s).length === 0);
    if (missing.length) {
      header.appendChild(el('p', { class: 'note', text: 'This report has no ' +
          missing.join(', ') + ' data; the charts that need it are left out.' }));
    }
  }

  // ---------------------------------------------------------------- verdict table

  let tableRows = [];

  function buildTable() {
    const box = document.getElementById('verdicts');
    box.appendChild(el('h2', { text: 'Verdicts' }));
    const familySelect = el('select', { id: 'filter-family', 'aria-label': 'family' },
        el('option', { value: '', text: 'every family' }));
    for (const f of families) familySelect.appendChild(el('option', { value: f, text: f }));
    const verdictSelect = el('select', { id: 'filter-verdict', 'aria-label': 'verdict' });
    for (const [v, t] of [['', 'every verdict'], ['fail', 'FAIL only'], ['not-pass',
      'FAIL or UNKNOWN'], ['unknown', 'UNKNOWN only'], ['pass', 'PASS only']]) {
      verdictSelect.appendChild(el('option', { value: v, text: t }));
    }
    box.appendChild(el('div', { class: 'filters' },
        el('label', {}, 'Family ', familySelect), el('label', {}, 'Verdict ', verdictSelect),
        el('span', { id: 'row-count', class: 'meta' })));

    const table = el('table', { id: 'verdict-table' });
    const head = el('tr', {});
    for (const h of ['verdict', 'kind', 'family', 'kernel', 'variant', 'gen',
      'latency (' + MICRO + ')', 'speed-up', 'detail', 'time (ms)']) {
      head.appendChild(el('th', { text: h }));
    }
    table.appendChild(el('thead', {}, head));
    const body = el('tbody', {});
    for (const v of verdictRows()) {
      const r = v.row;
      const tr = el('tr', { class: 'verdict-row ' + v.verdict, 'data-family': familyOf(r),
        'data-verdict': v.verdict, 'data-kind': v.kind });
      tr.appendChild(el('td', {}, el('span', { class: 'badge ' + v.verdict,
        text: VERDICT_TEXT[v.verdict] })));
      tr.appendChild(el('td', { text: v.kind }));
      tr.appendChild(el('td', { text: familyOf(r) }));
      tr.appendChild(el('td', { class: 'kernel', text: r.kernel || '?' }));
      tr.appendChild(el('td', { text: v.variant }));
      tr.appendChild(el('td', { text: r.gen || DASH }));
      tr.appendChild(v.latency ? latencyCell(r) : el('td', { class: 'num', text: DASH }));
      tr.appendChild(el('td', { text: v.speedup }));
      // A row that did not pass says why (the report's `reason`: a case's verdict line, an
      // equiv outcome's cause, the unproved obligations).
      const why = v.verdict !== 'pass' && r.reason ? '; why: ' + r.reason : '';
      tr.appendChild(el('td', { class: 'detail', text: v.detail + why }));
      tr.appendChild(el('td', { class: 'num', text: isNumber(r.ms) ? r.ms.toFixed(0) : DASH }));
      body.appendChild(tr);
      const replay = Array.isArray(r.replay) ? r.replay : [];
      const entry = { tr: tr, row: r, family: familyOf(r), verdict: v.verdict, replay: null };
      if (replay.length) {
        const cell = el('td', { colspan: 10 }, el('span', { class: 'meta',
          text: v.kind === 'check' ? 'replay (one line per failing case):' : 'replay:' }));
        for (const line of replay) cell.appendChild(el('pre', { class: 'replay-line', text: line }));
        entry.replay = el('tr', { class: 'replay-row', 'data-family': familyOf(r),
          'data-verdict': v.verdict }, cell);
        body.appendChild(entry.replay);
      }
      tableRows.push(entry);
    }
    table.appendChild(body);
    box.appendChild(el('div', { class: 'table-scroll' }, table));

    familySelect.addEventListener('change', () => setFilter(familySelect.value,
        verdictSelect.value, true));
    verdictSelect.addEventListener('change', () => setFilter(familySelect.value,
        verdictSelect.value, true));
  }

  function verdictMatches(filter, verdict) {
    if (filter === '') return true;
    if (filter === 'not-pass') return verdict !== 'pass';
    return filter === verdict;
  }

  function setFilter(family, verdict, fromControls) {
    document.getElementById('filter-family').value = family;
    document.getElementById('filter-verdict').value = verdict;
    let shown = 0;
    for (const e of tableRows) {
      const visible = (family === '' || e.family === family) && verdictMatches(verdict, e.verdict);
      e.tr.hidden = !visible;
      if (e.replay) e.replay.hidden = !visible;
      if (visible) shown++;
    }
    const table = document.getElementById('verdict-table');
    table.setAttribute('data-visible-rows', String(shown));
    document.getElementById('row-count').textContent =
        'showing ' + shown + ' of ' + tableRows.length + ' rows' +
        (shown === 0 && tableRows.length > 0 ? ': no row matches the filter' : '');
    if (family !== '') openFamily(family);
    if (fromControls) {
      const p = new URLSearchParams();
      if (family) p.set('family', family);
      if (verdict) p.set('verdict', verdict);
      // A file:// page may refuse to rewrite its URL; the filter works without it.
      try {
        history.replaceState(null, '', '#' + p.toString());
      } catch (e) { /* the hash only mirrors the filter */ }
    }
  }

  // ---------------------------------------------------------------- charts

  const builders = new Map();  // canvas -> () => Chart.js config
  let chartsTotal = 0;
  let chartsRendered = 0;

  // A fixed-height box holding one chart canvas, drawn when it is first visible.
  function chartBox(id, kind, height, build, attrs) {
    const canvas = el('canvas', Object.assign({ id: id, 'data-chart': kind, role: 'img' },
        attrs || {}));
    builders.set(canvas, build);
    chartsTotal++;
    const box = el('div', { class: 'chart-box' }, canvas);
    box.style.height = height + 'px';
    return box;
  }

  function noData(kind, text) {
    return el('p', { class: 'no-data', 'data-no-chart': kind, text: text });
  }

  // Non-transparent pixels on a sample grid: a chart that drew nothing has none.
  function inkedPixels(canvas) {
    const w = canvas.width;
    const h = canvas.height;
    if (w === 0 || h === 0) return 0;
    const data = canvas.getContext('2d').getImageData(0, 0, w, h).data;
    let n = 0;
    for (let i = 3; i < data.length; i += 4 * 7) {
      if (data[i] !== 0) n++;
    }
    return n;
  }

  function renderCanvas(canvas) {
    const config = builders.get(canvas)();
    new Chart(canvas.getContext('2d'), config);  // eslint-disable-line no-new
    const datasets = config.data.datasets;
    canvas.setAttribute('data-datasets', String(datasets.length));
    canvas.setAttribute('data-points',
        String(datasets.reduce((n, d) => n + d.data.length, 0)));
    canvas.setAttribute('data-inked', String(inkedPixels(canvas)));
    canvas.setAttribute('data-rendered', 'true');
    chartsRendered++;
    document.body.setAttribute('data-charts-rendered', String(chartsRendered));
  }

  // Draws the charts under `root` that are not inside a closed <details>.
  function renderVisible(root) {
    for (const canvas of root.querySelectorAll('canvas[data-chart]')) {
      if (canvas.getAttribute('data-rendered') === 'true') continue;
      if (canvas.closest('details:not([open])')) continue;
      renderCanvas(canvas);
    }
  }

  function title(text, subtitle) {
    const t = { title: { display: true, text: text, font: { size: 13 } } };
    if (subtitle) t.subtitle = { display: true, text: subtitle };
    return t;
  }

  // A legend whose entries are short lines in the dataset's colour and dash (the default box
  // would fill the dash gaps).
  function lineLegend(position) {
    return {
      position: position,
      labels: {
        boxWidth: 36,
        boxHeight: 1,
        font: { size: 11 },
        generateLabels: (chart) => Chart.defaults.plugins.legend.labels.generateLabels(chart)
          .map((l) => Object.assign(l, { fillStyle: 'rgba(0, 0, 0, 0)' })),
      },
    };
  }

  function axisTitle(text) {
    return { display: true, text: text };
  }

  // Log-axis labels at 1, 2 and 5 times a power of ten, only at powers of ten when the axis
  // spans more than two decades (the other ticks stay grid lines).
  function logTick(v, index, ticks) {
    const lo = ticks[0].value;
    const hi = ticks[ticks.length - 1].value;
    const marks = hi / lo > 300 ? [1] : [1, 2, 5];
    const mantissa = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    return marks.some((m) => Math.abs(mantissa - m) < 1e-6) ? fmt(v) : '';
  }

  // A log2 seqlen axis: ticks at the powers of two the data spans.
  // The seqlen range of a chart; a single seqlen (a kernel whose domain is one shape) gets an
  // octave either side so its point is not drawn on the axis's edge.
  function seqlenRange(values) {
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    return lo === hi ? { lo: lo / 2, hi: hi * 2 } : { lo: lo, hi: hi };
  }

  function seqlenAxis(values) {
    const { lo, hi } = seqlenRange(values);
    const ticks = [];
    for (let p = Math.pow(2, Math.floor(Math.log2(lo))); p <= hi * 1.0001; p *= 2) {
      if (p >= lo / 1.0001) ticks.push(p);
    }
    if (ticks.length === 0) ticks.push(lo);
    return {
      type: 'logarithmic',
      min: lo,
      max: hi,
      title: axisTitle('seqlen (tokens, log2 scale)'),
      afterBuildTicks: (axis) => {
        axis.ticks = ticks.map((v) => ({ value: v }));
      },
      ticks: { callback: (v) => String(v), maxRotation: 0, autoSkip: true },
    };
  }

  // Latency against seqlen, one line per (kernel, generation), the rewrite chain in order.
  function latencyChart(family) {
    const all = latency.filter((s) => familyOf(s) === family);
    const series = all.filter((s) => Array.isArray(s.points) && s.points.length > 0);
    if (series.length === 0) {
      return el('div', {}, noData('latency', 'No latency series for this family.'),
          skippedNote(all, 'latency'));
    }
    const kernels = kernelsOf.get(family);
    series.sort((a, b) => {
      const pa = chainPosition(a.kernel);
      const pb = chainPosition(b.kernel);
      return pa.root.localeCompare(pb.root) || pa.depth - pb.depth ||
          String(a.kernel).localeCompare(String(b.kernel)) ||
          String(a.gen).localeCompare(String(b.gen));
    });
    const fixed = orderedUnique(series.map((s) => paramsText(s.fixed)));
    const build = () => {
      const xs = [];
      const datasets = series.map((s) => {
        const color = PALETTE[kernels.indexOf(s.kernel) % PALETTE.length];
        const data = s.points.filter((p) => isNumber(p.latency_us))
          .map((p) => ({ x: p.seqlen, y: p.latency_us }));
        for (const p of data) xs.push(p.x);
        return { label: s.kernel + ' \u00b7 ' + s.gen, data: data, borderColor: color,
          backgroundColor: color, borderDash: genDash(s.gen), borderWidth: 2, pointRadius: 2.5,
          tension: 0 };
      });
      return {
        type: 'line',
        data: { datasets: datasets },
        options: {
          plugins: Object.assign(title('Modelled latency vs seqlen, default options',
              fixed.length === 1 && fixed[0] ? 'fixed: ' + fixed[0] +
                  '; line style = generation' : 'line style = generation'),
          { legend: lineLegend('bottom') }),
          scales: {
            x: seqlenAxis(xs.length ? xs : [1]),
            y: { type: 'logarithmic', title: axisTitle('latency (' + MICRO + ', log scale)'),
              ticks: { autoSkip: false, callback: logTick } },
          },
        },
      };
    };
    // A long rewrite chain (a dozen kernels on three generations) needs the full width and room
    // for its legend, or the plot is squeezed flat.
    const wide = series.length > 8;
    const height = 300 + 20 * Math.ceil(series.length / (wide ? 5 : 3));
    return el('div', { class: wide ? 'wide' : null }, chartBox('chart-latency-' + slug(family),
        'latency', height, build, { 'data-family': family }), skippedNote(all, 'latency'));
  }

  // The seqlens a sweep left out and why (series[].skipped: [{seqlen, reason}]).
  function skippedNote(series, what) {
    const lines = [];
    for (const s of series) {
      for (const k of Array.isArray(s.skipped) ? s.skipped : []) {
        lines.push(s.kernel + ' \u00b7 ' + s.gen + ' \u00b7 seqlen=' + k.seqlen + ': ' + k.reason);
      }
    }
    if (lines.length === 0) return null;
    const list = el('ul', { class: 'skipped', 'data-skipped': what });
    for (const line of lines.slice(0, 10)) list.appendChild(el('li', { text: line }));
    if (lines.length > 10) list.appendChild(el('li', { text: 'and ' + (lines.length - 10) +
        ' more (report.json)' }));
    return el('div', { class: 'meta' }, 'Not in the ' + what + ' chart:', list);
  }

  // Each rewrite's speed-up over its predecessor at the report shape, from the check rows.
  function speedupChart(family) {
    const rows = checks.filter((r) => familyOf(r) === family && isNumber(r.speedup));
    if (rows.length === 0) {
      return noData('speedup', 'No rewrite in this family has a latency to compare with.');
    }
    const build = () => {
      // Two lines a bar: long kernel names would otherwise be cut at the axis.
      const labels = rows.map((r) => [r.kernel + ' vs ' + (r.predecessor || r.rewrites),
        (r.mask || optionsText(r.options)) + ' \u00b7 ' + r.gen + ': ' + r.speedup.toFixed(2) +
            TIMES]);
      const data = rows.map((r) => r.speedup);
      return {
        type: 'bar',
        data: { labels: labels, datasets: [{ label: 'speed-up', data: data,
          backgroundColor: data.map((v) => (v >= 1 ? '#59a14f' : '#e15759')) }] },
        options: {
          indexAxis: 'y',
          plugins: Object.assign(title('Speed-up of each rewrite over its predecessor',
              'predecessor latency / rewrite latency at the report shape; green > 1 = faster'),
          { legend: { display: false } }),
          scales: {
            x: { beginAtZero: true, title: axisTitle('speed-up (' + TIMES + ')'),
              grid: { color: (c) => (c.tick && c.tick.value === 1 ? '#555' : '#e3e3e3') } },
            y: { title: axisTitle('rewrite vs predecessor'), ticks: { font: { size: 11 } } },
          },
        },
      };
    };
    return chartBox('chart-speedup-' + slug(family), 'speedup', 100 + 36 * rows.length, build,
        { 'data-family': family });
  }

  // The histogram of normalized error over every checked case: ten bins over [0, 1] and an
  // overflow bin (> 1: the case failed) drawn in red.
  function errorHistogram() {
    const values = [];
    let notFinite = 0;
    for (const r of checks) {
      let list = r.normalized_errors;
      // Reports made before the field existed: the case bound ratios.
      if (!Array.isArray(list)) list = (r.cases || []).map((c) => c.case_bound_ratio);
      for (const v of list) {
        const x = ratio(v);
        if (x === null) notFinite++;
        else values.push(x);
      }
    }
    if (values.length === 0) return noData('error-histogram', 'No checked case in this report.');
    const build = () => {
      const counts = new Array(11).fill(0);
      for (const v of values) counts[v > 1 ? 10 : Math.min(9, Math.floor(v * 10))]++;
      const labels = [];
      for (let i = 0; i < 10; i++) labels.push((i / 10).toFixed(1) + '\u2013' + ((i + 1) / 10).toFixed(1));
      labels.push('> 1 (fail)');
      const colors = counts.map((_, i) => (i === 10 ? '#d62728' : '#4e79a7'));
      return {
        type: 'bar',
        data: { labels: labels, datasets: [{ label: 'cases', data: counts,
          backgroundColor: colors }] },
        options: {
          plugins: Object.assign(title('Normalized error of every checked case',
              values.length + ' cases' + (notFinite ? ' (not counted: ' + notFinite +
                  ' without a finite ratio, a run error or a non-finite output)' : '') +
                  '; normalized error = max |error| / bound, a case passes at <= 1'),
          { legend: { display: false } }),
          scales: {
            x: { title: axisTitle('normalized error (observed / bound)') },
            y: { beginAtZero: true, ticks: { precision: 0 }, title: axisTitle('cases') },
          },
        },
      };
    };
    return chartBox('chart-error-histogram', 'error-histogram', 260, build);
  }

  // SBUF or PSUM footprint against seqlen, one line per generation, its capacity dashed.
  function footprintChart(kernel, memory) {
    const series = footprint.filter((s) => s.kernel === kernel && Array.isArray(s.points) &&
        s.points.length > 0);
    if (series.length === 0) return null;
    const key = memory.toLowerCase() + '_bytes';
    // Buffers a kernel places itself are not in the allocator's peak. Their bytes are a sum over
    // the buffers, which may share addresses (PSUM banks reused), so they are a line of their
    // own, not added to the peak.
    const explicitKey = memory.toLowerCase() + '_explicit_bytes';
    const anyExplicit = series.some((s) => s.points.some((p) => p[explicitKey] > 0));
    const capKey = memory.toLowerCase() + '_capacity_bytes';
    const unit = series[0].unit || 'bytes';
    const perPartition = /per partition/.test(unit);
    const build = () => {
      const xs = [];
      const datasets = [];
      const capacities = new Map();  // capacity -> generations
      for (const s of series) {
        const color = PALETTE[Math.max(0, generations.indexOf(s.gen)) % PALETTE.length];
        const data = s.points.filter((p) => isNumber(p[key]))
          .map((p) => ({ x: p.seqlen, y: p[key] / 1024 }));
        for (const p of data) xs.push(p.x);
        const radius = data.length === 1 ? 4 : 2.5;
        datasets.push({ label: s.gen + (anyExplicit ? ' allocator peak' : ' peak'),
          data: data, borderColor: color, backgroundColor: color, borderWidth: 2,
          pointRadius: radius });
        if (anyExplicit) {
          datasets.push({ label: s.gen + ' explicitly placed (sum)',
            data: s.points.filter((p) => isNumber(p[explicitKey]))
              .map((p) => ({ x: p.seqlen, y: p[explicitKey] / 1024 })),
            borderColor: color, backgroundColor: color, borderDash: [2, 3], borderWidth: 2,
            pointRadius: radius, pointStyle: 'rectRot' });
        }
        if (isNumber(s[capKey])) {
          if (!capacities.has(s[capKey])) capacities.set(s[capKey], []);
          capacities.get(s[capKey]).push(s.gen);
        }
      }
      const { lo, hi } = seqlenRange(xs.length ? xs : [1]);
      for (const [cap, gens] of capacities) {
        // In the generation's colour; grey when generations share it.
        const color = gens.length === 1 ?
          PALETTE[Math.max(0, generations.indexOf(gens[0])) % PALETTE.length] : '#555';
        datasets.push({ label: 'capacity ' + gens.join(', ') + ' (' + fmt(cap / 1024) + ' KiB)',
          data: [{ x: lo, y: cap / 1024 }, { x: hi, y: cap / 1024 }], borderColor: color,
          backgroundColor: 'rgba(0, 0, 0, 0)', borderDash: [6, 4], borderWidth: 1.5,
          pointRadius: 0 });
      }
      return {
        type: 'line',
        data: { datasets: datasets },
        options: {
          plugins: Object.assign(title(memory + ' footprint vs seqlen',
              anyExplicit ? 'dotted = buffers placed by the kernel, summed (may overlap); ' +
                  'dashed = capacity' :
                'peak allocation; dashed = capacity'), { legend: lineLegend('bottom') }),
          scales: {
            x: seqlenAxis(xs.length ? xs : [1]),
            // grace: the capacity line stays clear of the chart's top edge.
            y: { beginAtZero: true, grace: '8%', title: axisTitle('KiB' + (perPartition ?
                ' per partition' : '')) },
          },
        },
      };
    };
    const gens = series.map((s) => s.gen).join('-');
    // Room for the legend: a line per three entries (peaks, explicit sums, capacities).
    const entries = series.length * (anyExplicit ? 3 : 2);
    return chartBox('chart-' + memory.toLowerCase() + '-' + slug(kernel), memory.toLowerCase(),
        250 + 18 * Math.ceil(entries / 3), build, { 'data-kernel': kernel,
          'data-generations': gens });
  }

  // One colour per engine kind whatever the track is called ("PE", "core0 tensor", "DMA q1").
  const TRACK_COLORS = [[/dma/i, '#76b7b2'], [/tensor|\bpe\b/i, '#4e79a7'],
    [/vector|\bdve\b/i, '#59a14f'], [/scalar|\bact\b/i, '#f28e2b'],
    [/gpsimd|pool/i, '#b07aa1'], [/sync|\bsp\b/i, '#9c755f']];
  function trackColor(name, i) {
    const hit = TRACK_COLORS.find(([re]) => re.test(name));
    return hit ? hit[1] : PALETTE[i % PALETTE.length];
  }

  // Busy intervals per engine and DMA queue as floating horizontal bars.
  function timelineChart(t) {
    const tracks = Array.isArray(t.tracks) ? t.tracks : [];
    const intervals = Array.isArray(t.intervals) ? t.intervals : [];
    if (t.error || tracks.length === 0) {
      return noData('timeline', 'No timeline on ' + t.gen + ': ' + (t.error || 'no engine track') +
          '.');
    }
    const id = 'chart-timeline-' + slug(t.kernel) + '-' + slug(t.gen);
    const build = () => {
      const perTrack = tracks.map(() => []);
      intervals.forEach((iv, i) => {
        const ok = Number.isInteger(iv.track) && iv.track >= 0 && iv.track < tracks.length &&
            isNumber(iv.start_us) && isNumber(iv.end_us) && iv.start_us <= iv.end_us;
        if (!ok) {
          console.error('timeline ' + t.kernel + ' on ' + t.gen + ': interval ' + i +
              ' is malformed (track ' + iv.track + ' of ' + tracks.length + ', ' + iv.start_us +
              ' to ' + iv.end_us + ' ' + MICRO + ')');
          return;
        }
        perTrack[iv.track].push({ x: [iv.start_us, iv.end_us], y: tracks[iv.track] });
      });
      const end = isNumber(t.latency_us) ? t.latency_us : undefined;
      return {
        type: 'bar',
        data: {
          labels: tracks,
          datasets: tracks.map((name, i) => ({ label: name, data: perTrack[i],
            backgroundColor: trackColor(name, i), grouped: false, barPercentage: 0.8,
            categoryPercentage: 1, minBarLength: 1 })),
        },
        options: {
          indexAxis: 'y',
          layout: { padding: { right: 18 } },  // room for the last time label
          plugins: Object.assign(title('Engine timeline: busy intervals per engine and DMA queue',
              paramsText(t.params) + ' on ' + t.gen + ', modelled latency ' + fmt(t.latency_us) +
                  ' ' + MICRO + (isNumber(t.merge_gap_us) && t.merge_gap_us > 0 ?
                '; gaps under ' + fmt(t.merge_gap_us) + ' ' + MICRO + ' merged' : '')), {
            legend: { display: false },
            tooltip: { callbacks: { label: (c) => c.raw.y + ': ' + fmt(c.raw.x[0]) + ' to ' +
                fmt(c.raw.x[1]) + ' ' + MICRO } },
          }),
          scales: {
            x: { type: 'linear', min: 0, max: end, title: axisTitle('time (' + MICRO + ')') },
            y: { title: axisTitle('engine / queue'), ticks: { autoSkip: false } },
          },
        },
      };
    };
    return chartBox(id, 'timeline', Math.min(700, 90 + 22 * tracks.length), build,
        { 'data-kernel': t.kernel, 'data-gen': t.gen });
  }

  // The link to a timeline's Perfetto trace: a relative href only (the file sits beside the page).
  function traceLink(t) {
    const file = String(t.trace_file || '');
    const p = el('p', { class: 'trace-link' }, 'Perfetto trace: ');
    if (file && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(file) && !file.startsWith('/')) {
      p.appendChild(el('a', { href: file, text: file }));
    } else {
      p.appendChild(el('code', { text: file || DASH }));
    }
    p.appendChild(document.createTextNode(
        ' (' + (/\.gz$/.test(file) ? 'gzip-compressed ' : '') + 'JSON at ' +
        paramsText(t.params) + ') \u2014 open it in ' +
        'ui.perfetto.dev ("Open trace file") or chrome://tracing ("Load") as it is.'));
    return p;
  }

  // ---------------------------------------------------------------- per kernel

  const FRONTIER_TEXT = { fits_below: 'fits below', fits_everywhere: 'fits everywhere',
    fits_nowhere: 'fits nowhere', unknown: 'unknown', skipped: 'skipped' };

  function frontierTable(kernel) {
    const rows = [];
    for (const p of proofs.filter((r) => r.kernel === kernel)) {
      if (Array.isArray(p.frontiers)) {
        for (const f of p.frontiers) rows.push(f);
      } else {
        // Reports made before the field existed: one frontier_<gen>_seqlen text per proof row.
        for (const [k, v] of Object.entries(p)) {
          const m = /^frontier_(.+)_seqlen$/.exec(k);
          if (m) rows.push({ gen: m[1], status: null, text: String(v) });
        }
      }
    }
    if (rows.length === 0) return noData('frontier', 'No capacity frontier for this kernel.');
    const table = el('table', { class: 'frontier', id: 'table-frontier-' + slug(kernel),
      'data-kernel': kernel });
    table.appendChild(el('caption', { text: 'Capacity frontier: the largest seqlen that fits ' +
        'SBUF and PSUM, per generation' }));
    table.appendChild(el('thead', {}, el('tr', {}, el('th', { text: 'generation' }),
        el('th', { text: 'status' }), el('th', { text: 'largest fitting seqlen' }),
        el('th', { text: 'first failing' }), el('th', { text: 'searched up to' }),
        el('th', { text: 'what does not fit, or why no answer' }))));
    const body = el('tbody', {});
    for (const f of rows) {
      const status = f.status ? FRONTIER_TEXT[f.status] || f.status : f.text;
      body.appendChild(el('tr', { 'data-status': f.status || '' }, el('td', { text: f.gen }),
          el('td', { class: 'status', text: status }),
          el('td', { class: 'num', text: isNumber(f.largest_fitting) ?
            String(f.largest_fitting) : DASH }),
          el('td', { class: 'num', text: isNumber(f.first_failing) ? String(f.first_failing) :
            DASH }),
          el('td', { class: 'num', text: isNumber(f.searched_hi) ? String(f.searched_hi) : DASH }),
          el('td', { text: f.reason || '' })));
    }
    table.appendChild(body);
    return table;
  }

  // Badges for the verdicts of a set of table rows: FAIL and UNKNOWN counts, else PASS.
  function verdictBadges(keep) {
    const counts = { pass: 0, fail: 0, unknown: 0 };
    for (const e of tableRows) {
      if (keep(e.row)) counts[e.verdict]++;
    }
    const out = el('span', {});
    if (counts.fail) out.appendChild(el('span', { class: 'badge fail', text: counts.fail + ' FAIL' }));
    if (counts.unknown) {
      out.appendChild(el('span', { class: 'badge unknown', text: counts.unknown + ' UNKNOWN' }));
    }
    if (!counts.fail && !counts.unknown && counts.pass) {
      out.appendChild(el('span', { class: 'badge pass', text: 'PASS' }));
    }
    return out;
  }

  function kernelSection(family, kernel) {
    const own = checks.filter((r) => r.kernel === kernel);
    const pred = predecessorOf.get(kernel);
    const summary = el('summary', {}, el('span', { class: 'kernel', text: kernel }),
        el('span', { class: 'meta', text: (pred ? ' rewrites ' + pred + ' \u00b7 ' : ' ') +
          own.length + ' check(s)' }),
        verdictBadges((r) => r.kernel === kernel && familyOf(r) === family));
    const details = el('details', { class: 'kernel-section', id: 'kernel-' + slug(kernel),
      'data-kernel': kernel }, summary);
    details.appendChild(frontierTable(kernel));
    const grid = el('div', { class: 'chart-grid' });
    const sbuf = footprintChart(kernel, 'SBUF');
    const psum = footprintChart(kernel, 'PSUM');
    if (sbuf) grid.appendChild(sbuf);
    if (psum) grid.appendChild(psum);
    if (!sbuf && !psum) grid.appendChild(noData('footprint', 'No footprint series.'));
    details.appendChild(grid);
    const skipped = skippedNote(footprint.filter((s) => s.kernel === kernel), 'footprint');
    if (skipped) details.appendChild(skipped);
    const own_timelines = timelines.filter((t) => t.kernel === kernel);
    for (const t of own_timelines) {
      details.appendChild(timelineChart(t));
      // A very large kernel's timeline and trace are made at a smaller shape: say which and why.
      if (t.shape_note) {
        details.appendChild(el('p', { class: 'shape-note', text: 'Smaller shape: ' +
            String(t.shape_note) + ' (report shape ' + paramsText(t.report_params) + ').' }));
      }
      if (t.trace_file) details.appendChild(traceLink(t));
    }
    if (own_timelines.length === 0) details.appendChild(noData('timeline', 'No timeline.'));
    return details;
  }

  // ---------------------------------------------------------------- per family

  function familySection(family) {
    const rows = checks.filter((r) => familyOf(r) === family);
    const kernels = kernelsOf.get(family);
    const summary = el('summary', {}, el('h2', { text: family }),
        el('span', { class: 'meta', text: kernels.length + ' kernel(s), ' + rows.length +
          ' check(s)' }),
        verdictBadges((r) => familyOf(r) === family));
    const details = el('details', { class: 'family-section', id: 'family-' + slug(family),
      'data-family': family }, summary);
    details.appendChild(el('div', { class: 'chart-grid' }, latencyChart(family),
        speedupChart(family)));
    for (const k of kernels) details.appendChild(kernelSection(family, k));
    return details;
  }

  function openFamily(family) {
    const d = document.getElementById('family-' + slug(family));
    if (d && !d.open) d.open = true;  // its toggle listener draws the charts
  }

  function buildSections() {
    const hist = document.getElementById('error-section');
    hist.appendChild(el('h2', { text: 'Normalized error' }));
    // The bound is the case bound (oracle/case_bound.h): the contract's roundings applied to this
    // case's values. Where they leave one possible output value, a correct kernel lands on it and
    // its ratio is 1, so a bar near 1 is not a warning; only > 1 fails.
    hist.appendChild(el('p', { class: 'meta', text: 'Bound = this case\'s bound: the precision ' +
        'contract\'s own roundings evaluated on the case\'s values. Where they leave a single ' +
        'possible output value (a bf16 output, for instance), a correct kernel produces exactly ' +
        'that value and its ratio is 1: bars near 1 are expected, only > 1 is a failure.' }));
    hist.appendChild(errorHistogram());

    const box = document.getElementById('families');
    const bar = el('div', { class: 'filters' }, el('h2', { text: 'Families' }));
    const expand = el('button', { type: 'button', id: 'expand-all', text: 'expand all' });
    const collapse = el('button', { type: 'button', id: 'collapse-all', text: 'collapse all' });
    bar.appendChild(expand);
    bar.appendChild(collapse);
    box.appendChild(bar);
    box.appendChild(el('p', { class: 'meta', text: 'Each family: latency vs seqlen and the ' +
        'speed-up of each rewrite; each kernel inside: its capacity frontier, SBUF/PSUM ' +
        'footprint and an engine timeline. Click a name to open it.' }));
    for (const f of families) box.appendChild(familySection(f));
    for (const d of document.querySelectorAll('details')) {
      d.addEventListener('toggle', () => {
        if (d.open) renderVisible(d);
      });
    }
    expand.addEventListener('click', () => setAllOpen(true));
    collapse.addEventListener('click', () => setAllOpen(false));
  }

  function setAllOpen(open) {
    for (const d of document.querySelectorAll('#families details')) d.open = open;
    if (open) renderVisible(document.body);
  }

  // ---------------------------------------------------------------- start

  function applyHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    const family = p.get('family') || '';
    const verdict = p.get('verdict') || '';
    if (p.get('expand') === 'all') setAllOpen(true);
    setFilter(families.includes(family) ? family : '', verdict, false);
  }

  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 12;
  // Points on the edge of the plot area (the largest seqlen, the slowest kernel) drawn whole.
  Chart.defaults.datasets.line.clip = 6;

  buildHeader();
  buildTable();
  buildSections();
  document.body.setAttribute('data-charts-total', String(chartsTotal));
  document.body.setAttribute('data-charts-rendered', '0');
  applyHash();
  renderVisible(document.body);
  window.addEventListener('hashchange', applyHash);
  document.body.setAttribute('data-report-ready', 'true');
})();
