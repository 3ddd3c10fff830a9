/* ingestbench control panel (`ingestbench serve`), the page's whole behaviour.
 *
 * This script owns: the tab navigation (#run, #configs, #packs, #reports, #scenarios), the
 * header (version from GET /api/info, the run's state), the token (from the address the
 * server printed, `#token=…`, or the prompt; kept in the tab's sessionStorage, sent as
 * `Authorization: Bearer`), every call to the JSON API of
 * docs/panel.md, and the five tabs:
 *   Run       — pick or paste a config, validate, start with overrides and a scenario; poll
 *               GET /api/run each second; live SVG charts; pause/resume/stop/rate; the
 *               finished run's report opened in Reports.
 *   Configs   — list, view, a builder for the common keys, a YAML editor with line numbers,
 *               inline validation (errors at their lines), save and delete when writable.
 *   Packs     — the catalog, a pack's event types, weights, ATT&CK ids and fields, samples.
 *   Reports   — list, open (summary, timeline charts, histogram, SLOs), compare two,
 *               download JSON and CSV (fetched with the token, saved through a Blob URL).
 *   Scenarios — list, a stages builder with ATT&CK pickers, YAML editor, validate, preview,
 *               save and delete.
 * It runs under `default-src 'none'; script-src 'self'`: no inline handlers, no eval, and the
 * DOM is built with createElement/textContent only (never innerHTML with data).
 */
'use strict';
(function () {
  const TOKEN_KEY = 'ingestbench.panel.token';
  const FETCH_TIMEOUT_MS = 10000;
  const POLL_MS = 1000;
  const TABS = ['run', 'configs', 'packs', 'reports', 'scenarios'];
  // The config picker's "paste" entry: a leading dot, which no listed file name has (docs/panel.md).
  const PASTE = '.paste';
  const $ = (id) => document.getElementById(id);

  // ---- formatting ---------------------------------------------------------------------
  const nf0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  const nf1 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
  const nf2 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
  const nf3 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });
  const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
  const isNum = (v) => typeof v === 'number' && isFinite(v);
  const int = (v) => (isNum(v) ? nf0.format(v) : '—');
  const eps = (v) => (isNum(v) ? (Math.abs(v) >= 100 ? nf0 : nf1).format(v) : '—');
  function ms(v) {
    if (!isNum(v)) return '—';
    const f = v < 1 ? nf3 : v < 10 ? nf2 : v < 100 ? nf1 : nf0;
    return f.format(v) + ' ms';
  }
  function num(v) {
    if (!isNum(v)) return v == null ? '—' : String(v);
    const a = Math.abs(v);
    return (a >= 100 ? nf0 : a >= 10 ? nf1 : a >= 1 ? nf2 : nf3).format(v);
  }
  function duration(s) {
    if (!isNum(s)) return '—';
    s = Math.max(0, Math.floor(s));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const two = (n) => String(n).padStart(2, '0');
    if (h > 0) return `${h}h ${two(m)}m ${two(sec)}s`;
    if (m > 0) return `${m}m ${two(sec)}s`;
    return `${sec}s`;
  }
  function bytes(v) {
    if (!isNum(v)) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? nf0 : nf1).format(v) + ' ' + units[i];
  }
  function when(v) {
    if (v == null || v === '') return '—';
    const d = isNum(v) ? new Date(v * 1000) : new Date(v);
    if (isNaN(d.getTime())) return String(v);
    return d.toLocaleString();
  }

  // ---- DOM helpers --------------------------------------------------------------------
  const PROPS = new Set(['value', 'checked', 'selected', 'disabled', 'title', 'colSpan', 'type', 'placeholder', 'min', 'max', 'step']);
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = String(v);
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else if (PROPS.has(k)) e[k] = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c == null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function set(id, text) {
    const e = $(id);
    if (e) e.textContent = text == null ? '—' : String(text);
  }
  function message(id, text, kind, status) {
    const e = $(id);
    e.textContent = text || '';
    e.className = 'msg' + (kind ? ' ' + kind : '');
    e.dataset.status = status == null ? '' : String(status);
  }
  function pill(e, text, cls) {
    e.textContent = text;
    e.className = 'pill ' + (cls || '');
  }
  function kv(dl, pairs) {
    dl.replaceChildren();
    for (const [k, v] of pairs) {
      if (v === undefined) continue;
      dl.append(el('dt', { text: k }), el('dd', {}, v instanceof Node ? v : (v == null ? '—' : String(v))));
    }
  }
  function tags(list) {
    return (list || []).map((t) => el('span', { class: 'tag', text: t }));
  }
  function emptyRow(tbody, cols, text) {
    tbody.replaceChildren(el('tr', {}, el('td', { class: 'none', colSpan: cols, text })));
  }
  const enc = encodeURIComponent;
  function withExt(name) {
    name = name.trim();
    return /\.ya?ml$/i.test(name) ? name : name + '.yaml';
  }

  // ---- token and requests -------------------------------------------------------------
  // Where sessionStorage keeps nothing (a private window), the token lives in this page.
  let tokenHere = '';
  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || tokenHere; } catch (e) { return tokenHere; }
  }
  function keepToken(v) {
    tokenHere = v;
    try { sessionStorage.setItem(TOKEN_KEY, v); } catch (e) { /* private mode: kept in the page */ }
  }
  // The address `ingestbench serve` prints carries the token it generated, once, after
  // `#token=` (a fragment: never sent to the server): kept for this tab and taken out of the
  // address bar and the history before anything else runs.
  (function tokenFromAddress() {
    const m = /^#token=([^&#/]+)$/.exec(location.hash);
    if (!m) return;
    let v = '';
    try { v = decodeURIComponent(m[1]); } catch (e) { v = ''; }
    if (v) keepToken(v);
    history.replaceState(null, '', location.pathname + location.search);
  })();
  function askToken() {
    $('token_hint').textContent = token()
      ? 'the token in this tab was refused; enter it again'
      : 'kept in this tab only (sessionStorage), sent as a header';
    $('token_form').hidden = false;
  }
  $('token_form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = $('token_input').value.trim();
    $('token_input').value = '';
    if (!v) return;
    keepToken(v);
    $('token_form').hidden = true;
    cache.packs = cache.attack = null;
    loadInfo();
    showTab();
    pollSoon(0);
  });
  function authHeaders() {
    const h = {};
    const t = token();
    if (t) h['Authorization'] = 'Bearer ' + t;
    return h;
  }
  /** One API call: `{ok, status, json, response}`; never throws (a network failure is status 0). */
  async function api(method, path, body) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
    const headers = authHeaders();
    headers['Accept'] = 'application/json';
    const init = { method, headers, signal: ctl.signal, cache: 'no-store', credentials: 'omit', redirect: 'error' };
    if (method !== 'GET') headers['Content-Type'] = 'application/json';
    // Only the writes that take a body send one (a DELETE takes none).
    if (method === 'POST' || method === 'PUT') init.body = JSON.stringify(body || {});
    let r;
    try {
      r = await fetch(path, init);
    } catch (e) {
      clearTimeout(timer);
      return { ok: false, status: 0, json: { error: 'the server did not answer' } };
    }
    let json = null;
    try { json = await r.json(); } catch (e) { json = null; }
    clearTimeout(timer);
    if (r.status === 401) askToken();
    if (!json || typeof json !== 'object') json = r.ok ? {} : { error: 'HTTP ' + r.status };
    return { ok: r.ok, status: r.status, json, response: r };
  }
  function errText(res) {
    if (res.status === 401) return 'the panel needs its token (enter it above)';
    const e = res.json && res.json.error ? res.json.error : 'HTTP ' + res.status;
    return res.status ? `${e} (${res.status})` : e;
  }
  /** Fetches with the token and saves through a Blob URL: a plain link could not send the header. */
  async function download(path, fallbackName, msgId) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
    try {
      const r = await fetch(path, { headers: authHeaders(), signal: ctl.signal, cache: 'no-store', credentials: 'omit', redirect: 'error' });
      if (r.status === 401) askToken();
      if (!r.ok) {
        let e = 'HTTP ' + r.status;
        try { e = (await r.json()).error || e; } catch (x) { /* not JSON */ }
        message(msgId, 'download failed: ' + e, 'bad', r.status);
        return;
      }
      const cd = r.headers.get('Content-Disposition') || '';
      const m = /filename="?([^";]+)"?/i.exec(cd);
      const name = m ? m[1] : fallbackName;
      const blob = await r.blob();
      const url = URL.createObjectURL(blob);
      const a = el('a', { href: url, download: name });
      a.hidden = true;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 30000);
      message(msgId, `downloaded ${name} (${bytes(blob.size)})`, 'ok');
    } catch (e) {
      message(msgId, 'download failed: the server did not answer', 'bad');
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- shared data --------------------------------------------------------------------
  const cache = { info: null, packs: null, attack: null, configs: null, scenarios: null };
  async function loadInfo() {
    const r = await api('GET', '/api/info');
    if (!r.ok) { set('version', 'version unknown: ' + errText(r)); return; }
    cache.info = r.json;
    const av = String(r.json.attack_version || 'ATT&CK ?');
    set('version', `v${r.json.version || '?'} · ${/att&ck/i.test(av) ? av : 'ATT&CK ' + av}`);
  }
  async function ensurePacks() {
    if (cache.packs) return cache.packs;
    const r = await api('GET', '/api/packs');
    if (!r.ok) throw new Error(errText(r));
    cache.packs = r.json;
    return cache.packs;
  }
  async function ensureAttack() {
    if (cache.attack) return cache.attack;
    const r = await api('GET', '/api/attack');
    if (!r.ok) throw new Error(errText(r));
    cache.attack = r.json;
    return cache.attack;
  }

  // ---- tabs ---------------------------------------------------------------------------
  const onShow = {};
  function currentTab() {
    const t = location.hash.replace(/^#/, '').split('/')[0];
    return TABS.includes(t) ? t : 'run';
  }
  function showTab() {
    const t = currentTab();
    for (const name of TABS) {
      $('tab_' + name).hidden = name !== t;
      $('nav_' + name).classList.toggle('active', name === t);
    }
    document.body.dataset.tab = t;
    document.title = `${$('nav_' + t).textContent} · ingestbench panel`;
    if (onShow[t]) onShow[t]();
  }
  window.addEventListener('hashchange', showTab);
  function go(tab) {
    if (currentTab() === tab) showTab();
    else location.hash = '#' + tab;
  }

  // ---- SVG charts ---------------------------------------------------------------------
  const SVG_NS = 'http://www.w3.org/2000/svg';
  function node(name, attrs, text) {
    const e = document.createElementNS(SVG_NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }
  function box(svg) {
    const vb = svg.viewBox.baseVal;
    return { W: vb.width || 640, H: vb.height || 200, L: 58, R: 12, T: 10, B: 24 };
  }
  /** Lines of `rows` (objects with `t` and each series' key) over t; the last `span` seconds. */
  function lineChart(svg, rows, series, label, span) {
    svg.replaceChildren();
    const { W, H, L, R, T, B } = box(svg);
    const pw = W - L - R, ph = H - T - B;
    if (!rows.length) {
      svg.append(node('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'no complete second yet'));
      svg.dataset.points = '0';
      svg.dataset.lastT = '';
      return;
    }
    const tmax = rows[rows.length - 1].t;
    const tspan = Math.max(10, span ? Math.min(span, tmax - rows[0].t) : tmax - rows[0].t);
    const tmin = tmax - tspan;
    const pts = rows.filter((p) => p.t >= tmin);
    let vmax = 0;
    for (const p of pts) for (const s of series) if (isNum(p[s.key])) vmax = Math.max(vmax, p[s.key]);
    const ymax = niceMax(vmax * 1.05);
    const x = (t) => L + ((t - tmin) / tspan) * pw;
    const y = (v) => T + ph - (Math.min(Math.max(v, 0), ymax) / ymax) * ph;
    for (let i = 0; i <= 4; i++) {
      const v = (ymax * i) / 4, yy = y(v).toFixed(1);
      svg.append(node('line', { x1: L, x2: W - R, y1: yy, y2: yy, class: 'grid' }));
      svg.append(node('text', { x: L - 6, y: +yy + 4, 'text-anchor': 'end', class: 'axis' }, label(v)));
    }
    for (const [t, anchor] of [[tmin, 'start'], [tmin + tspan / 2, 'middle'], [tmax, 'end']]) {
      svg.append(node('text', { x: x(t).toFixed(1), y: H - 6, 'text-anchor': anchor, class: 'axis' }, 't ' + Math.round(t) + 's'));
    }
    for (const s of series) {
      const have = pts.filter((p) => isNum(p[s.key]));
      if (!have.length) continue;
      const points = have.map((p) => x(p.t).toFixed(1) + ',' + y(p[s.key]).toFixed(1)).join(' ');
      svg.append(node('polyline', { points, class: s.cls, 'data-key': s.key }));
    }
    svg.dataset.points = String(pts.length);
    svg.dataset.lastT = String(tmax);
  }
  function barChart(svg, buckets) {
    svg.replaceChildren();
    const { W, H, L, R, T, B } = box(svg);
    const pw = W - L - R, ph = H - T - B;
    const rows = (buckets || []).filter((b) => isNum(b.count));
    if (!rows.length || !rows.some((b) => b.count > 0)) {
      svg.append(node('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'no latency samples'));
      svg.dataset.bars = '0';
      return;
    }
    // Leave out the empty buckets at both ends.
    let a = 0, b = rows.length - 1;
    while (a < b && rows[a].count === 0) a++;
    while (b > a && rows[b].count === 0) b--;
    const shown = rows.slice(a, b + 1);
    const ymax = niceMax(Math.max(...shown.map((r) => r.count)) * 1.05);
    const bw = pw / shown.length;
    for (let i = 0; i <= 4; i++) {
      const v = (ymax * i) / 4, yy = (T + ph - (v / ymax) * ph).toFixed(1);
      svg.append(node('line', { x1: L, x2: W - R, y1: yy, y2: yy, class: 'grid' }));
      svg.append(node('text', { x: L - 6, y: +yy + 4, 'text-anchor': 'end', class: 'axis' }, compact.format(v)));
    }
    const every = Math.max(1, Math.ceil(shown.length / 10));
    shown.forEach((r, i) => {
      const h = (r.count / ymax) * ph;
      const rect = node('rect', { x: (L + i * bw + 1).toFixed(1), y: (T + ph - h).toFixed(1), width: Math.max(1, bw - 2).toFixed(1), height: h.toFixed(1), class: 'bar' });
      rect.append(node('title', {}, `≤ ${num(r.le_ms)} ms: ${int(r.count)}`));
      svg.append(rect);
      if (i % every === 0) {
        svg.append(node('text', { x: (L + i * bw + bw / 2).toFixed(1), y: H - 6, 'text-anchor': 'middle', class: 'axis' }, '≤' + num(r.le_ms)));
      }
    });
    svg.dataset.bars = String(shown.length);
  }
  const epsLabel = (v) => (v < 10 ? nf2 : compact).format(v);
  const msLabel = (v) => (v < 10 ? nf2 : compact).format(v) + ' ms';

  // ---- a YAML editor with line numbers and diagnostics at their lines ------------------
  function Editor(textId, gutterId) {
    const ta = $(textId), g = $(gutterId);
    let marks = new Map();
    let lines = 0;
    function render() {
      const n = ta.value.split('\n').length;
      if (n !== lines || g.dataset.dirty === '1') {
        const frag = document.createDocumentFragment();
        for (let i = 1; i <= n; i++) {
          const m = marks.get(i);
          frag.append(el('div', { class: m || null, text: i, dataset: { line: i } }));
        }
        g.replaceChildren(frag);
        lines = n;
        g.dataset.dirty = '0';
      }
      g.scrollTop = ta.scrollTop;
    }
    ta.addEventListener('input', render);
    ta.addEventListener('scroll', () => { g.scrollTop = ta.scrollTop; });
    render();
    return {
      get value() { return ta.value; },
      set value(v) { ta.value = v; ta.scrollTop = 0; this.mark([]); },
      mark(diags) {
        marks = new Map();
        for (const d of diags) {
          if (!isNum(d.line)) continue;
          if (d.severity === 'warning' && marks.get(d.line) === 'err') continue;
          marks.set(d.line, d.severity === 'warning' ? 'warnline' : 'err');
        }
        g.dataset.dirty = '1';
        render();
      },
      jump(line, column) {
        if (!isNum(line)) return;
        const all = ta.value.split('\n');
        let off = 0;
        for (let i = 0; i < line - 1 && i < all.length; i++) off += all[i].length + 1;
        const len = (all[line - 1] || '').length;
        const start = off + Math.min(Math.max((column || 1) - 1, 0), len);
        ta.focus();
        ta.setSelectionRange(start, off + len);
        const lh = parseFloat(getComputedStyle(ta).lineHeight) || 19;
        ta.scrollTop = Math.max(0, (line - 1) * lh - ta.clientHeight / 3);
        g.scrollTop = ta.scrollTop;
        for (const d of g.children) d.classList.toggle('current', +d.dataset.line === line);
      },
    };
  }
  /** The errors and warnings of a validation, each with where it is; a click jumps there. */
  function showDiags(ul, editor, errors, warnings) {
    ul.replaceChildren();
    const all = (errors || []).map((d) => Object.assign({ severity: 'error' }, d))
      .concat((warnings || []).map((d) => Object.assign({}, d, { severity: 'warning' })));
    for (const d of all) {
      const where = isNum(d.line) ? `${d.line}:${isNum(d.column) ? d.column : 1}` : 'file';
      const li = el('li', { class: d.severity === 'warning' ? 'warning' : 'error', dataset: { line: isNum(d.line) ? d.line : '' } },
        el('span', { class: 'where', text: where }),
        d.severity === 'warning' ? 'warning: ' : 'error: ',
        d.path ? el('code', { text: d.path }) : null, d.path ? ' ' : null,
        d.message || '');
      if (editor && isNum(d.line)) li.addEventListener('click', () => editor.jump(d.line, d.column));
      ul.append(li);
    }
    if (editor) editor.mark(all);
    return all;
  }

  // ---- a YAML scalar -------------------------------------------------------------------
  function yamlStr(s) {
    s = String(s);
    if (/^[A-Za-z0-9_./:@+-]+$/.test(s) && !/^(true|false|yes|no|on|off|null|~|[-+]?[0-9.]+(e[-+]?[0-9]+)?)$/i.test(s) && !/^[-:]/.test(s)) return s;
    return JSON.stringify(s);
  }
  function unquote(v) {
    v = v.replace(/\s+#.*$/, '').trim();
    if (/^".*"$/.test(v)) { try { return JSON.parse(v); } catch (e) { return v.slice(1, -1); } }
    if (/^'.*'$/.test(v)) return v.slice(1, -1).replace(/''/g, "'");
    return v;
  }

  // =====================================================================================
  // Run
  // =====================================================================================
  const run = { wasActive: null, runId: null, samples: [], lastT: -1, startedHere: false, openedReport: null, stopArmed: 0, errPrev: {}, kinds: [] };
  const MAX_KINDS = 6;

  async function fillRunPickers() {
    const sel = $('run_config'), keep = sel.value;
    const cfgs = await api('GET', '/api/configs');
    sel.replaceChildren();
    if (cfgs.ok && cfgs.json.configs) {
      cache.configs = cfgs.json;
      for (const c of cfgs.json.configs) sel.append(el('option', { value: c.name, text: c.name }));
    }
    sel.append(el('option', { value: PASTE, text: '— paste a config (YAML) —' }));
    if (cfgs.ok && !cfgs.json.dir) sel.title = cfgs.json.reason || '';
    if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
    $('run_paste').hidden = sel.value !== PASTE;

    const ssel = $('run_scenario'), skeep = ssel.value;
    const scs = await api('GET', '/api/scenarios');
    ssel.replaceChildren(el('option', { value: '', text: '(none: background load only)' }));
    if (scs.ok && scs.json.scenarios) {
      for (const c of scs.json.scenarios) ssel.append(el('option', { value: c.name, text: c.name }));
    }
    if ([...ssel.options].some((o) => o.value === skeep)) ssel.value = skeep;
  }
  $('run_config').addEventListener('change', () => { $('run_paste').hidden = $('run_config').value !== PASTE; });

  function runBody() {
    const b = {};
    const sel = $('run_config').value;
    if (sel === PASTE) b.text = $('run_text').value;
    else b.config = sel;
    const str = (id) => $(id).value.trim();
    const n = (id) => (str(id) === '' ? undefined : Number(str(id)));
    if (str('run_duration')) b.duration = str('run_duration');
    if (n('run_total') !== undefined) b.total = n('run_total');
    if (n('run_eps') !== undefined) b.eps = n('run_eps');
    if (n('run_threads') !== undefined) b.threads = n('run_threads');
    if (n('run_workers') !== undefined) b.workers = n('run_workers');
    if (str('run_scenario')) b.scenario = str('run_scenario');
    if (str('run_speed')) b.scenario_speed = str('run_speed');
    return b;
  }
  /** A summary value that may be an object (`stop: {after, total_events}`) as `key value` pairs. */
  function plain(v) {
    if (v == null) return '—';
    if (typeof v !== 'object') return String(v);
    const parts = Object.entries(v).filter(([, x]) => x != null).map(([k, x]) => `${k} ${typeof x === 'object' ? JSON.stringify(x) : x}`);
    return parts.length ? parts.join(', ') : '—';
  }
  function diagList(errors, warnings) {
    const ul = el('ul', { class: 'diags' });
    showDiags(ul, null, errors, warnings);
    return ul;
  }
  function configSummary(s) {
    const dl = el('dl', { class: 'kv' });
    kv(dl, [
      ['name', s.name], ['adapter', s.adapter], ['url', s.url], ['source', s.source], ['mode', s.mode],
      ['profile', s.profile], ['eps', num(s.eps)], ['stop', plain(s.stop)], ['threads', s.threads], ['workers', s.workers],
      ['auth', s.auth == null ? 'none' : s.auth],
    ]);
    return dl;
  }
  $('run_validate').addEventListener('click', async () => {
    const out = $('run_validation');
    out.replaceChildren();
    const b = runBody();
    let text = b.text;
    if (b.config !== undefined) {
      if (!b.config) { message('run_message', 'pick a config or paste one', 'bad'); return; }
      const f = await api('GET', '/api/configs/' + enc(b.config));
      if (!f.ok) { message('run_message', 'could not read the config: ' + errText(f), 'bad', f.status); return; }
      text = f.json.text;
    }
    const r = await api('POST', '/api/configs/validate', { text });
    if (!r.ok) { message('run_message', 'validation failed: ' + errText(r), 'bad', r.status); return; }
    const v = r.json;
    message('run_message', v.valid ? `valid: the config can run${v.warnings.length ? ` (${v.warnings.length} warning(s))` : ''}` : `not valid: ${v.errors.length} error(s)`, v.valid ? 'ok' : 'bad');
    out.append(diagList(v.errors, v.warnings));
    if (v.summary) out.append(configSummary(v.summary));
  });
  $('run_start').addEventListener('click', async () => {
    const b = runBody();
    $('run_validation').replaceChildren();
    if (b.config === '' ) { message('run_message', 'pick a config or paste one', 'bad'); return; }
    message('run_message', 'starting…', '');
    const r = await api('POST', '/api/run', b);
    if (r.status === 202 || r.ok) {
      run.startedHere = true;
      message('run_message', `started ${r.json.name || 'the run'} (${r.json.run_id || '?'})`, 'ok', r.status);
    } else if (r.status === 409) {
      message('run_message', 'Refused: ' + (r.json.error || 'a run is already going: one run at a time.'), 'bad', 409);
    } else {
      message('run_message', 'the run was not started: ' + errText(r), 'bad', r.status);
      if (r.json.errors) $('run_validation').append(diagList(r.json.errors, r.json.warnings));
    }
    pollSoon(100);
  });

  async function control(action, body) {
    message('run_control_message', action + '…', '');
    const r = await api('POST', '/api/run/' + action, body || {});
    if (r.ok) message('run_control_message', `${action}: done at ${new Date().toLocaleTimeString()}`, 'ok', r.status);
    else message('run_control_message', `${action}: ${errText(r)}`, 'bad', r.status);
    pollSoon(150);
  }
  $('run_pause').addEventListener('click', () => control('pause'));
  $('run_resume').addEventListener('click', () => control('resume'));
  $('run_stop').addEventListener('click', () => {
    const b = $('run_stop');
    if (Date.now() - run.stopArmed > 4000) {
      run.stopArmed = Date.now();
      b.textContent = 'Really stop? Click again';
      setTimeout(() => { if (Date.now() - run.stopArmed >= 4000) b.textContent = 'Stop'; }, 4100);
      return;
    }
    run.stopArmed = 0;
    b.textContent = 'Stop';
    control('stop');
  });
  $('run_rate_set').addEventListener('click', () => {
    const v = Number($('run_rate_value').value);
    if (!(v > 0) || !isFinite(v)) { message('run_control_message', 'rate: give a number above 0', 'bad'); return; }
    control('rate', $('run_rate_kind').value === 'factor' ? { factor: v } : { eps: v });
  });
  $('run_last_open').addEventListener('click', () => {
    const n = $('run_last_open').dataset.report;
    if (n) openReportInTab(n);
  });

  /** Per-second samples the snapshot's history does not keep (p50s, backlog, lag, watched). */
  function sample(s) {
    const t = Math.floor(s.elapsed_s || 0);
    if (t === run.lastT) return;
    run.lastT = t;
    const lat = (s.interval && s.interval.latency_ms) || {};
    const i = lat.intended || {}, sv = lat.service || {};
    const has = (l) => l && l.count > 0;
    const w = s.watched;
    // Errors by kind: the snapshot counts them for the whole run; a second's are the growth.
    const errs = {};
    const first = run.samples.length === 0; // no growth known yet: the counts are the run's so far
    for (const [k, v] of Object.entries(s.errors || {})) {
      errs['err_' + k] = first ? null : Math.max(0, v - (run.errPrev[k] || 0));
      if (!run.kinds.includes(k)) run.kinds.push(k);
    }
    run.errPrev = Object.assign({}, s.errors || {});
    run.samples.push({
      ...errs,
      t,
      p50: has(i) ? i.p50 : null, p99: has(i) ? i.p99 : null,
      sp50: has(sv) ? sv.p50 : null, sp99: has(sv) ? sv.p99 : null,
      backlog: s.backlog_events, lag: s.lag_ms_max,
      cpu: w ? w.cpu_cores : null, rss: w ? w.rss_bytes / (1024 * 1024) : null,
      own: w && w.own ? w.own.cpu_cores : null,
    });
    if (run.samples.length > 600) run.samples.shift();
  }
  function runStateName(j) {
    if (j.active) return j.snapshot ? j.snapshot.state || 'running' : 'starting';
    if (j.snapshot) return 'finished';
    return 'idle';
  }
  function renderRun(j) {
    const s = j.snapshot;
    const st = runStateName(j);
    pill($('run_state'), st, st);
    pill($('run_badge'), st, st);
    $('run_state').dataset.state = st;
    set('run_cfg_name', j.config || '—');
    const active = !!j.active;
    const sstate = s ? s.state : '';
    $('run_pause').disabled = !(active && sstate === 'running');
    $('run_resume').disabled = !(active && sstate === 'paused');
    $('run_stop').disabled = !(active && (sstate === 'running' || sstate === 'paused'));
    $('run_rate_set').disabled = !(active && sstate === 'running');
    // Start stays clickable: the server refuses a second run (409) and the page says so.
    $('run_start').title = active ? 'one run at a time: a run is going' : '';
    if (s) {
      const r = s.run || {}, iv = s.interval || {}, cu = s.cumulative || {};
      if (r.run_id !== run.runId) {
        run.runId = r.run_id; run.samples = []; run.lastT = -1; run.errPrev = {}; run.kinds = [];
        $('run_errors_legend').replaceChildren(el('span', {}, el('i', { class: 'sw s-errors' }), 'errors (timeline count)'));
      }
      const kindsBefore = run.kinds.length;
      sample(s);
      set('run_name', r.name || '(unnamed)');
      set('run_id', r.run_id || '—');
      set('run_adapter', r.adapter);
      set('run_url', r.url);
      set('run_source', r.source);
      set('run_elapsed', duration(s.elapsed_s));
      set('run_remaining', s.remaining_s == null ? 'no time limit' : duration(s.remaining_s));
      set('run_seq', int(s.seq));
      set('run_target_eps', eps(iv.target_eps));
      set('run_rate_eps', eps(s.rate_eps));
      set('run_achieved_eps', eps(iv.achieved_eps));
      $('run_achieved_eps').classList.toggle('warn', sstate === 'running' && iv.target_eps > 0 && iv.achieved_eps < 0.95 * iv.target_eps);
      set('run_cum_achieved_eps', eps(cu.achieved_eps));
      set('run_events_sent', int(cu.events_sent));
      set('run_events_accepted', int(cu.events_accepted));
      set('run_events_failed', int(cu.events_failed));
      $('run_events_failed').classList.toggle('bad', cu.events_failed > 0);
      const errs = Object.entries(s.errors || {}).sort((a, b) => b[1] - a[1]);
      set('run_errors_total', int(errs.reduce((n, e) => n + e[1], 0)));
      set('run_backlog', int(s.backlog_events));
      set('run_lag', ms(s.lag_ms_max));
      const il = (iv.latency_ms || {}).intended || {}, sl = (iv.latency_ms || {}).service || {};
      set('run_intended', il.count ? `${ms(il.p50)} / ${ms(il.p99)}` : '—');
      set('run_service', sl.count ? `${ms(sl.p50)} / ${ms(sl.p99)}` : '—');
      const tb = $('run_errors');
      if (!errs.length) emptyRow(tb, 2, 'none');
      else tb.replaceChildren(...errs.map(([k, v]) => el('tr', {}, el('td', { text: k }), el('td', { class: 'num', text: int(v) }))));
      const sc = s.scenario;
      $('run_scenario_tile').hidden = !sc;
      if (sc) {
        set('run_scenario_sent', int(sc.events_sent));
        set('run_scenario_events', int(sc.events));
        set('run_scenario_accepted', int(sc.events_accepted));
        set('run_scenario_failed', int(sc.events_failed));
        $('run_scenario_failed').classList.toggle('bad', sc.events_failed > 0);
      }
      const hist = s.history || [];
      lineChart($('run_chart_eps'), hist, [{ key: 'target_eps', cls: 's-target' }, { key: 'achieved_eps', cls: 's-achieved' }], epsLabel, 600);
      const shown = run.kinds.slice(0, MAX_KINDS);
      if (run.kinds.length !== kindsBefore) {
        $('run_errors_legend').replaceChildren(el('span', {}, el('i', { class: 'sw s-errors' }), 'errors (timeline count)'),
          ...shown.map((k, i) => el('span', {}, el('i', { class: 'sw s-k' + i }), k)),
          ...(run.kinds.length > MAX_KINDS ? [el('span', { text: `+${run.kinds.length - MAX_KINDS} more kinds (table)` })] : []));
      }
      // The history's per-second totals, and each kind's growth per second since the page watched.
      const byT = new Map(run.samples.map((p) => [p.t, p]));
      const errRows = hist.map((h) => Object.assign({}, byT.get(h.t + 1) || {}, { t: h.t, errors: h.errors }));
      lineChart($('run_chart_errors'), errRows, [{ key: 'errors', cls: 's-errors' },
        ...shown.map((k, i) => ({ key: 'err_' + k, cls: 's-k' + i }))], epsLabel, 600);
      lineChart($('run_chart_latency'), run.samples, [
        { key: 'p50', cls: 's-p50' }, { key: 'p99', cls: 's-intended' }, { key: 'sp50', cls: 's-sp50' }, { key: 'sp99', cls: 's-service' },
      ], msLabel, 600);
      lineChart($('run_chart_backlog'), run.samples, [{ key: 'backlog', cls: 's-backlog' }, { key: 'lag', cls: 's-lag' }], epsLabel, 600);
      const w = s.watched;
      $('run_watched').hidden = !w;
      if (w) {
        lineChart($('run_chart_cpu'), run.samples, [{ key: 'cpu', cls: 's-cpu' }, { key: 'own', cls: 's-own' }], (v) => nf2.format(v), 600);
        lineChart($('run_chart_rss'), run.samples, [{ key: 'rss', cls: 's-rss' }], (v) => compact.format(v) + ' MiB', 600);
        const rows = (w.processes || []).map((p) => [`${p.name}[${p.pid}]${p.alive ? '' : ' (gone)'}`, nf2.format(p.cpu_cores), bytes(p.rss_bytes)]);
        rows.push(['total', nf2.format(w.cpu_cores), bytes(w.rss_bytes)]);
        if (w.own) rows.push(['ingestbench (this run)', nf2.format(w.own.cpu_cores), bytes(w.own.rss_bytes)]);
        $('run_watched_rows').replaceChildren(...rows.map((c) => el('tr', {}, el('td', { text: c[0] }), el('td', { class: 'num', text: c[1] }), el('td', { class: 'num', text: c[2] }))));
      }
    }
    const last = j.last;
    $('run_last').hidden = !last;
    if (last) {
      set('run_last_name', `${last.run_name || last.config || '(unnamed)'}`);
      set('run_last_ended', when(last.ended_at));
      pill($('run_last_verdict'), last.pass ? 'pass' : `fail · exit ${last.exit_code}`, last.pass ? 'pass' : 'fail');
      set('run_last_reasons', (last.reasons || []).join('; '));
      set('run_last_report', last.report || '—');
      $('run_last_open').dataset.report = last.report || '';
      $('run_last_open').disabled = !last.report;
    }
    // The run this page watched has ended: its report opens in Reports (from the Run tab).
    if (run.wasActive === true && !active && last && last.report && run.openedReport !== last.report) {
      run.openedReport = last.report;
      message('run_control_message', `the run has ended: report ${last.report}`, last.pass ? 'ok' : 'bad');
      if (currentTab() === 'run') openReportInTab(last.report);
    }
    run.wasActive = active;
  }

  let pollTimer = 0, pollFailures = 0;
  function pollSoon(delay) {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(poll, delay);
  }
  async function poll() {
    const r = await api('GET', '/api/run');
    if (r.ok) {
      pollFailures = 0;
      $('global_message').hidden = true;
      renderRun(r.json);
    } else if (r.status !== 401) {
      pollFailures++;
      if (pollFailures >= 2) {
        $('global_message').hidden = false;
        $('global_message').textContent = 'The panel server is not answering (' + errText(r) + ') since ' + new Date().toLocaleTimeString() + '.';
      }
    }
    pollSoon(pollFailures >= 2 ? 2000 : POLL_MS);
  }
  onShow.run = () => { fillRunPickers(); };

  // =====================================================================================
  // Configs
  // =====================================================================================
  const cfgEditor = Editor('cfg_text', 'cfg_gutter');
  const cfg = { writable: false, selected: null, deleteArmed: 0, savedText: null };

  async function loadConfigs(select) {
    const r = await api('GET', '/api/configs');
    const ul = $('cfg_list');
    ul.replaceChildren();
    if (!r.ok) { message('cfg_message', 'could not list configs: ' + errText(r), 'bad', r.status); return; }
    const j = r.json;
    cache.configs = j;
    cfg.writable = !!(j.dir && j.writable);
    const ro = $('cfg_readonly');
    ro.hidden = cfg.writable;
    ro.textContent = cfg.writable ? '' : 'Configs are read-only here: ' + (j.reason || 'the directory is not writable') +
      '. You can still build, validate and run a pasted config.';
    set('cfg_dir', j.dir ? 'in ' + j.dir : '');
    for (const id of ['cfg_save', 'cfg_delete']) {
      $(id).disabled = !cfg.writable;
      $(id).title = cfg.writable ? '' : j.reason || 'read-only';
    }
    for (const c of j.configs || []) {
      const li = el('li', { dataset: { name: c.name }, class: c.name === (select || cfg.selected) ? 'selected' : null },
        el('span', { text: c.name }), ' ', el('span', { class: 'hint', text: `${bytes(c.bytes)} · ${when(c.modified_s)}` }));
      li.addEventListener('click', () => openConfig(c.name));
      ul.append(li);
    }
    if (!(j.configs || []).length) ul.append(el('li', { class: 'muted', text: j.dir ? 'no configs yet' : 'no directory: --configs-dir not given' }));
  }
  function selectInList(ul, name) {
    for (const li of ul.children) li.classList.toggle('selected', li.dataset.name === name);
  }
  async function openConfig(name) {
    const r = await api('GET', '/api/configs/' + enc(name));
    if (!r.ok) { message('cfg_message', `could not open ${name}: ${errText(r)}`, 'bad', r.status); return; }
    cfg.selected = name;
    selectInList($('cfg_list'), name);
    $('cfg_name').value = name;
    cfgEditor.value = r.json.text;
    cfg.savedText = r.json.text;
    $('cfg_diags').replaceChildren();
    $('cfg_summary').replaceChildren();
    fillBuilderFrom(r.json.text);
    message('cfg_message', `opened ${name}`, '');
  }
  $('cfg_new').addEventListener('click', () => {
    cfg.selected = null;
    selectInList($('cfg_list'), null);
    $('cfg_name').value = '';
    cfgEditor.value = '';
    $('cfg_diags').replaceChildren();
    $('cfg_summary').replaceChildren();
    message('cfg_message', 'a new config: fill the builder and write its YAML, or type it', '');
  });
  $('cfg_reload').addEventListener('click', () => loadConfigs());

  async function fillSourcePicker(sel, keep) {
    try {
      const p = await ensurePacks();
      const cur = keep || sel.value;
      sel.replaceChildren(...(p.packs || []).map((k) => el('option', { value: k.id, text: `${k.id} (${k.category || k.format || ''})` })));
      if (cur && [...sel.options].some((o) => o.value === cur)) sel.value = cur;
    } catch (e) {
      sel.replaceChildren(el('option', { value: '', text: 'packs unavailable: ' + e.message }));
    }
  }
  function builderYaml() {
    const v = (id) => $(id).value.trim();
    const out = ['schema_version: "1.0"'];
    if (v('b_name')) out.push('name: ' + yamlStr(v('b_name')));
    out.push('', 'target:', '  adapter: ' + v('b_adapter'), '  url: ' + yamlStr(v('b_url') || 'builtin'));
    if (v('b_max_events')) out.push('  batch:', '    max_events: ' + Number(v('b_max_events')));
    out.push('', 'source:', '  id: ' + yamlStr(v('b_source')));
    out.push('', 'workload:', '  profile: steady', '  eps: ' + Number(v('b_eps') || 0));
    if (v('b_workers')) out.push('  workers: ' + Number(v('b_workers')));
    const kind = v('b_stop_kind'), sv = v('b_stop_value');
    out.push('  stop:', kind === 'total_events' ? '    total_events: ' + Number(sv) : '    after: ' + yamlStr(sv || '30s'));
    return out.join('\n') + '\n';
  }
  $('b_stop_kind').addEventListener('change', () => {
    $('b_stop_value').value = $('b_stop_kind').value === 'total_events' ? '10000' : '30s';
  });
  $('b_write').addEventListener('click', () => {
    cfgEditor.value = builderYaml();
    if (!$('cfg_name').value.trim() && $('b_name').value.trim()) $('cfg_name').value = withExt($('b_name').value.trim().replace(/[^A-Za-z0-9_.-]+/g, '-'));
    message('cfg_message', 'YAML written from the builder; validate or save it', '');
  });
  /** The builder's fields from a config's text, where a plain `key: value` line says them. */
  function fillBuilderFrom(text) {
    const grab = (re) => { const m = re.exec(text); return m ? unquote(m[1]) : null; };
    const setIf = (id, v) => { if (v != null && v !== '') $(id).value = v; };
    setIf('b_name', grab(/^name:\s*(.+)$/m));
    const adapter = grab(/^\s+adapter:\s*(.+)$/m);
    if (adapter && [...$('b_adapter').options].some((o) => o.value === adapter)) $('b_adapter').value = adapter;
    setIf('b_url', grab(/^\s+url:\s*(.+)$/m));
    const src = grab(/^source:\s*\n(?:\s+.*\n)*?\s+id:\s*(.+)$/m);
    if (src && [...$('b_source').options].some((o) => o.value === src)) $('b_source').value = src;
    setIf('b_eps', grab(/^\s+eps:\s*([0-9.eE+]+)/m));
    setIf('b_max_events', grab(/^\s+max_events:\s*([0-9]+)/m));
    $('b_workers').value = grab(/^\s+workers:\s*([0-9]+)/m) || '';
    const after = grab(/^\s+after:\s*(.+)$/m), total = grab(/^\s+total_events:\s*([0-9]+)/m);
    if (total && !after) { $('b_stop_kind').value = 'total_events'; $('b_stop_value').value = total; }
    else if (after) { $('b_stop_kind').value = 'after'; $('b_stop_value').value = after; }
  }

  async function validateConfig() {
    const r = await api('POST', '/api/configs/validate', { text: cfgEditor.value });
    if (!r.ok) { message('cfg_message', 'validation failed: ' + errText(r), 'bad', r.status); return null; }
    const v = r.json;
    showDiags($('cfg_diags'), cfgEditor, v.errors, v.warnings);
    message('cfg_message', v.valid ? `valid${v.warnings.length ? `, ${v.warnings.length} warning(s)` : ''}` : `not valid: ${v.errors.length} error(s)`, v.valid ? 'ok' : 'bad');
    $('cfg_summary').replaceChildren();
    if (v.summary) $('cfg_summary').replaceWith(Object.assign(configSummary(v.summary), { id: 'cfg_summary' }));
    return v;
  }
  $('cfg_validate').addEventListener('click', validateConfig);
  $('cfg_save').addEventListener('click', async () => {
    if (!cfg.writable) return;
    const name = $('cfg_name').value.trim();
    if (!name) { message('cfg_message', 'give the file a name first', 'bad'); $('cfg_name').focus(); return; }
    const file = withExt(name);
    $('cfg_name').value = file;
    const r = await api('PUT', '/api/configs/' + enc(file), { text: cfgEditor.value });
    if (r.ok) {
      cfg.selected = r.json.name || file;
      cfg.savedText = cfgEditor.value;
      message('cfg_message', `saved ${cfg.selected}`, 'ok', r.status);
      showDiags($('cfg_diags'), cfgEditor, [], []);
      await loadConfigs(cfg.selected);
    } else {
      message('cfg_message', 'not saved: ' + errText(r), 'bad', r.status);
      if (r.json.errors) showDiags($('cfg_diags'), cfgEditor, r.json.errors, r.json.warnings);
    }
  });
  $('cfg_delete').addEventListener('click', async () => {
    if (!cfg.writable) return;
    const name = $('cfg_name').value.trim();
    if (!name) { message('cfg_message', 'no file to delete', 'bad'); return; }
    if (Date.now() - cfg.deleteArmed > 4000) {
      cfg.deleteArmed = Date.now();
      message('cfg_message', `click Delete again within 4 s to delete ${name}`, 'bad');
      return;
    }
    cfg.deleteArmed = 0;
    const r = await api('DELETE', '/api/configs/' + enc(name));
    if (r.ok) {
      message('cfg_message', `deleted ${name}`, 'ok', r.status);
      cfg.selected = null;
      $('cfg_name').value = '';
      cfgEditor.value = '';
      await loadConfigs();
    } else {
      message('cfg_message', 'not deleted: ' + errText(r), 'bad', r.status);
    }
  });
  $('cfg_run').addEventListener('click', async () => {
    const name = $('cfg_name').value.trim();
    await fillRunPickers();
    const sel = $('run_config');
    // The saved file when the editor holds exactly it; else the editor's text, pasted.
    if (name && cfgEditor.value === cfg.savedText && [...sel.options].some((o) => o.value === name)) {
      sel.value = name;
    } else {
      sel.value = PASTE;
      $('run_text').value = cfgEditor.value;
    }
    $('run_paste').hidden = sel.value !== PASTE;
    go('run');
  });
  onShow.configs = () => {
    loadConfigs();
    fillSourcePicker($('b_source'), 'aws.cloudtrail');
  };

  // =====================================================================================
  // Source packs
  // =====================================================================================
  const pack = { selected: null };
  async function loadPacks() {
    let p;
    try { p = await ensurePacks(); } catch (e) { emptyRow($('pack_list'), 4, 'could not load the catalog: ' + e.message); return; }
    renderPackList(p);
    const errs = p.errors || [];
    $('pack_errors').textContent = errs.length ? 'packs that do not load: ' + errs.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('; ') : '';
  }
  function eventNames(k) {
    // `event_types` is a count in the catalog (names come with GET /api/packs/{id}).
    return Array.isArray(k.event_types) ? k.event_types.map((e) => (typeof e === 'string' ? e : e.name)) : [];
  }
  function renderPackList(p) {
    const f = $('pack_filter').value.trim().toLowerCase();
    const tb = $('pack_list');
    const rows = (p.packs || []).filter((k) => !f || [k.id, k.category, k.format, k.description, ...(k.mitre || []), ...eventNames(k)]
      .some((s) => String(s || '').toLowerCase().includes(f)));
    if (!rows.length) { emptyRow(tb, 4, 'no pack matches'); return; }
    tb.replaceChildren(...rows.map((k) => {
      const tr = el('tr', { class: 'clickable' + (k.id === pack.selected ? ' selected' : ''), dataset: { id: k.id } },
        el('td', {}, el('strong', { text: k.id }), k.user ? el('span', { class: 'tag', text: 'user' }) : null),
        el('td', { text: k.category || '—' }), el('td', { text: k.format || '—' }),
        el('td', { class: 'num', text: isNum(k.event_types) ? k.event_types : eventNames(k).length }));
      tr.addEventListener('click', () => openPack(k.id));
      return tr;
    }));
  }
  $('pack_filter').addEventListener('input', () => { if (cache.packs) renderPackList(cache.packs); });
  async function openPack(id) {
    const r = await api('GET', '/api/packs/' + enc(id));
    if (!r.ok) { set('pack_title', `${id}: ${errText(r)}`); return; }
    const k = r.json;
    pack.selected = id;
    for (const tr of $('pack_list').children) tr.classList.toggle('selected', tr.dataset.id === id);
    $('pack_detail').dataset.id = id;
    set('pack_title', `${k.id} ${k.version ? 'v' + k.version : ''}`);
    set('pack_description', k.description || '');
    const sys = k.syslog || {};
    kv($('pack_meta'), [
      ['category', k.category], ['format', k.format], ['carrier', k.carrier], ['sourcetype', k.sourcetype],
      ['hosts', k.hosts || 'any'], ['syslog', [sys.app_name, sys.facility, sys.severity, sys.msgid].filter((x) => x != null).join(' · ') || '—'],
      ['from', `${k.file || '—'}${k.user ? ' (user pack)' : ' (built in)'}`],
      ['ATT&CK', el('span', {}, tags(k.mitre).length ? tags(k.mitre) : '—')],
    ]);
    const tb = $('pack_events');
    const evs = k.events || [];
    if (!evs.length) emptyRow(tb, 5, 'no event types');
    else tb.replaceChildren(...evs.map((e) => {
      const roles = Object.entries(e.roles || {}).map(([role, field]) => `${role}→${field}`);
      return el('tr', {},
        el('td', { text: e.name }), el('td', { class: 'num', text: num(e.weight) }), el('td', { class: 'num', text: isNum(e.share) ? nf1.format(e.share) + ' %' : '—' }),
        el('td', {}, tags(e.mitre)),
        el('td', {}, el('span', { class: 'mono', text: (e.fields || []).join(', ') }), roles.length ? el('div', { class: 'hint', text: 'roles: ' + roles.join(', ') }) : null));
    }));
    $('pack_sample').disabled = false;
    $('pack_render').disabled = false;
    await renderSample($('pack_seed').value.trim() === '' ? newSeed() : Number($('pack_seed').value));
  }
  // Seeds the page picks stay below 2^31: a JSON number the page reads back exactly.
  const newSeed = () => Math.floor(Math.random() * 2 ** 31);
  async function renderSample(seed) {
    const id = pack.selected;
    if (!id) return;
    const count = Math.min(20, Math.max(1, Number($('pack_count').value) || 3));
    let q = `?count=${count}`;
    if (seed != null && isFinite(seed)) q += `&seed=${seed}`;
    const r = await api('GET', `/api/packs/${enc(id)}/sample${q}`);
    const out = $('pack_samples');
    if (!r.ok) { out.replaceChildren(el('div', { class: 'msg bad', text: 'no sample: ' + errText(r) })); return; }
    $('pack_seed').value = r.json.seed;
    set('pack_sample_seed', `seed ${r.json.seed}`);
    out.dataset.seed = String(r.json.seed);
    out.replaceChildren(...(r.json.events || []).map((e) => el('pre', { class: 'sample', text: e.pretty || e.text })));
  }
  $('pack_sample').addEventListener('click', () => renderSample(newSeed()));
  $('pack_render').addEventListener('click', () => renderSample($('pack_seed').value.trim() === '' ? newSeed() : Number($('pack_seed').value)));
  onShow.packs = () => { loadPacks(); };

  // =====================================================================================
  // Reports
  // =====================================================================================
  const rep = { open: null };
  async function loadReports() {
    const r = await api('GET', '/api/reports');
    const tb = $('rep_list');
    if (!r.ok) { emptyRow(tb, 8, 'could not list reports: ' + errText(r)); return; }
    const j = r.json;
    set('rep_dir', j.dir ? 'in ' + j.dir : (j.reason || ''));
    const list = (j.reports || []).slice();
    const lr = await api('GET', '/api/run');
    const last = lr.ok ? lr.json.last : null;
    // Without --reports-dir the last finished run is still there, as `last`.
    if (last && last.report === 'last' && !list.some((x) => x.name === 'last')) {
      list.unshift({ name: 'last', run_name: last.run_name, started_at: null, target: null, pass: last.pass, exit_code: last.exit_code });
    }
    if (!list.length) emptyRow(tb, 8, j.dir ? 'no reports yet: run something' : 'no reports: ' + (j.reason || '--reports-dir not given'));
    else tb.replaceChildren(...list.map((x) => {
      const target = x.target && typeof x.target === 'object' ? `${x.target.adapter || ''} ${x.target.url || ''}` : x.target;
      const verdict = x.error ? el('span', { class: 'bad', text: x.error })
        : x.pass == null ? '—' : el('span', { class: 'pill ' + (x.pass ? 'pass' : 'fail'), text: x.pass ? 'pass' : `fail ${x.exit_code}` });
      const tr = el('tr', { class: 'clickable' + (x.name === rep.open ? ' selected' : ''), dataset: { name: x.name } },
        el('td', { class: 'mono', text: x.name }), el('td', { text: x.run_name || '—' }), el('td', { text: when(x.started_at) }),
        el('td', { text: target || '—' }), el('td', { class: 'num', text: eps(x.target_eps) }), el('td', { class: 'num', text: eps(x.achieved_eps) }),
        el('td', { class: 'num', text: ms(x.p99_ms) }), el('td', {}, verdict));
      if (!x.error) tr.addEventListener('click', () => openReport(x.name));
      return tr;
    }));
    for (const id of ['rep_a', 'rep_b']) {
      const sel = $(id), keep = sel.value;
      sel.replaceChildren(...list.filter((x) => !x.error).map((x) => el('option', { value: x.name, text: `${x.name}${x.run_name ? ' · ' + x.run_name : ''}` })));
      if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
    }
    // By default B is the newest report and A another one (the one before it).
    const a = $('rep_a'), b = $('rep_b');
    if (a.value === b.value && a.options.length > 1) {
      b.selectedIndex = 0;
      a.value = [...a.options].map((o) => o.value).find((v) => v !== b.value);
    }
  }
  function openReportInTab(name) {
    rep.pending = name;
    go('reports');
  }
  async function openReport(name) {
    const r = await api('GET', '/api/reports/' + enc(name));
    if (!r.ok) { message('rep_message', `could not open ${name}: ${errText(r)}`, 'bad', r.status); return; }
    message('rep_message', '', '');
    const j = r.json;
    rep.open = name;
    for (const tr of $('rep_list').children) tr.classList.toggle('selected', tr.dataset.name === name);
    $('rep_view').hidden = false;
    $('rep_view').dataset.name = name;
    set('rep_title', `${name} · ${j.name || '(unnamed run)'}`);
    const v = j.verdict || {};
    pill($('rep_verdict'), v.pass ? 'pass' : `fail · exit ${v.exit_code}`, v.pass ? 'pass' : 'fail');
    set('rep_reasons', (v.reasons || []).join('; '));
    const s = j.summary || {}, t = j.target || {};
    kv($('rep_summary'), [
      ['run', `${j.name || '—'} (${j.run_id || '?'})`], ['started', when(j.started_at)], ['duration', duration(j.duration_s)],
      ['target', `${t.adapter || '?'} ${t.url || ''} ${t.address ? '(' + t.address + ')' : ''}`], ['source', `${t.source || '?'} ${t.source_version || ''}`],
      ['threads × connections', `${j.threads ?? '—'} × ${j.connections ?? '—'}`],
      ['target eps', eps(s.target_eps)], ['achieved eps', eps(s.achieved_eps)], ['eps ratio', isNum(s.eps_ratio) ? nf3.format(s.eps_ratio) : '—'],
      ['events sent / accepted / failed', `${int(s.events_sent)} / ${int(s.events_accepted)} / ${int(s.events_failed)}`],
      ['batches sent / retried', `${int(s.batches_sent)} / ${int(s.batches_retried)}`],
      ['bytes sent', bytes(s.bytes_sent)], ['MB/s', num(s.mb_per_s)], ['worst lag', ms(s.lag_ms_max)],
      ['shortfall', `${int(s.shortfall_events)}${s.shortfall_by ? ' (' + s.shortfall_by + ')' : ''}`], ['aborted', j.aborted || 'no'],
    ]);
    const li = (j.latency_ms || {}).intended || {}, ls = (j.latency_ms || {}).service || {};
    kv($('rep_latency'), [
      ['intended p50 / p90 / p99', `${ms(li.p50)} / ${ms(li.p90)} / ${ms(li.p99)}`], ['intended p99.9 / max', `${ms(li.p99_9)} / ${ms(li.max)}`],
      ['service p50 / p90 / p99', `${ms(ls.p50)} / ${ms(ls.p90)} / ${ms(ls.p99)}`], ['service p99.9 / max', `${ms(ls.p99_9)} / ${ms(ls.max)}`],
      ['batches measured', int(li.count)], ['paused', duration(j.paused_s)],
      ['control actions', (j.control || []).map((c) => `t${Math.round(c.t_s)}s ${c.action}${c.detail ? ' ' + c.detail : ''}`).join(', ') || 'none'],
    ]);
    const tl = j.timeline || [];
    lineChart($('rep_chart_eps'), tl, [{ key: 'target_eps', cls: 's-target' }, { key: 'events_accepted', cls: 's-achieved' }], epsLabel);
    lineChart($('rep_chart_latency'), tl, [{ key: 'p50_ms', cls: 's-p50' }, { key: 'p99_ms', cls: 's-intended' }], msLabel);
    lineChart($('rep_chart_backlog'), tl, [{ key: 'backlog_events', cls: 's-backlog' }, { key: 'errors', cls: 's-errors' }], epsLabel);
    barChart($('rep_chart_hist'), j.latency_histogram);
    const watchedRows = tl.filter((x) => isNum(x.watched_cores) || isNum(x.own_cores))
      .map((x) => ({ t: x.t, cpu: x.watched_cores, own: x.own_cores, rss: isNum(x.watched_rss_bytes) ? x.watched_rss_bytes / (1024 * 1024) : null }));
    $('rep_watched').hidden = !watchedRows.length;
    if (watchedRows.length) {
      lineChart($('rep_chart_cpu'), watchedRows, [{ key: 'cpu', cls: 's-cpu' }, { key: 'own', cls: 's-own' }], (v) => nf2.format(v));
      lineChart($('rep_chart_rss'), watchedRows, [{ key: 'rss', cls: 's-rss' }], (v) => compact.format(v) + ' MiB');
    }
    const slo = j.slo || [];
    const tb = $('rep_slo');
    if (!slo.length) emptyRow(tb, 4, 'no objectives');
    else tb.replaceChildren(...slo.map((o) => el('tr', {},
      el('td', {}, el('code', { text: o.name }), o.default ? el('span', { class: 'hint', text: ' (default)' }) : null),
      el('td', { class: 'num', text: num(o.limit) }), el('td', { class: 'num', text: o.actual == null ? 'not judged' : num(o.actual) }),
      el('td', {}, el('span', { class: 'pill ' + (o.pass ? 'pass' : 'fail'), text: o.pass ? 'pass' : 'fail' })))));
  }
  $('rep_download_json').addEventListener('click', () => {
    if (rep.open) download(`/api/reports/${enc(rep.open)}?download=1`, /\.json$/.test(rep.open) ? rep.open : rep.open + '.json', 'rep_message');
  });
  $('rep_download_csv').addEventListener('click', () => {
    if (rep.open) download(`/api/reports/${enc(rep.open)}/csv`, rep.open.replace(/\.json$/, '') + '.csv', 'rep_message');
  });
  $('rep_reload').addEventListener('click', () => loadReports());
  function cell(v, unit) {
    if (typeof v === 'boolean') return v ? 'pass' : 'fail';
    if (v == null) return '—';
    if (isNum(v)) return num(v) + (unit ? ' ' + unit : '');
    return String(v);
  }
  $('rep_compare').addEventListener('click', async () => {
    const a = $('rep_a').value, b = $('rep_b').value;
    if (!a || !b) { message('rep_message', 'pick two reports to compare', 'bad'); return; }
    const r = await api('GET', `/api/reports/compare?a=${enc(a)}&b=${enc(b)}`);
    if (!r.ok) { message('rep_message', 'no comparison: ' + errText(r), 'bad', r.status); return; }
    const j = r.json;
    $('rep_compare_view').hidden = false;
    set('rep_compare_title', `Comparison: A ${j.a.name} (${j.a.run_name || '—'}) with B ${j.b.name} (${j.b.run_name || '—'})`);
    set('rep_cmp_a', 'A ' + (j.a.run_name || j.a.name));
    set('rep_cmp_b', 'B ' + (j.b.run_name || j.b.name));
    const rows = j.rows || [];
    const tb = $('rep_compare_rows');
    if (!rows.length) emptyRow(tb, 6, 'nothing to compare');
    else tb.replaceChildren(...rows.map((x) => el('tr', { class: x.differs ? 'differs' : null, dataset: { metric: x.metric, differs: x.differs ? '1' : '0' } },
      el('td', { text: x.label || x.metric }),
      el('td', { class: 'num' + (x.better === 'a' ? ' better' : ''), text: cell(x.a, x.unit) }),
      el('td', { class: 'num' + (x.better === 'b' ? ' better' : ''), text: cell(x.b, x.unit) }),
      el('td', { class: 'num', text: isNum(x.delta) ? (x.delta > 0 ? '+' : '') + num(x.delta) + (x.unit ? ' ' + x.unit : '') : '—' }),
      el('td', { class: 'num', text: isNum(x.delta_pct) ? (x.delta_pct > 0 ? '+' : '') + nf1.format(x.delta_pct) + ' %' : '—' }),
      el('td', { text: x.better ? x.better.toUpperCase() : '—' }))));
    message('rep_message', `${rows.filter((x) => x.differs).length} of ${rows.length} figures differ by 5 % or more (highlighted)`, '');
  });
  onShow.reports = async () => {
    // #reports/NAME opens that report.
    const named = location.hash.split('/')[1];
    if (named && !rep.pending) rep.pending = decodeURIComponent(named);
    await loadReports();
    if (rep.pending) {
      const n = rep.pending;
      rep.pending = null;
      await openReport(n);
    }
  };

  // =====================================================================================
  // Scenarios
  // =====================================================================================
  const scnEditor = Editor('scn_text', 'scn_gutter');
  const scn = { writable: false, selected: null, deleteArmed: 0 };
  const SHARED = ['user', 'host', 'source_ip', 'dest_ip', 'domain'];

  async function loadScenarios(select) {
    const r = await api('GET', '/api/scenarios');
    const ul = $('scn_list');
    ul.replaceChildren();
    if (!r.ok) { message('scn_message', 'could not list scenarios: ' + errText(r), 'bad', r.status); return; }
    const j = r.json;
    scn.writable = !!(j.dir && j.writable);
    const ro = $('scn_readonly');
    ro.hidden = scn.writable;
    ro.textContent = scn.writable ? '' : 'Scenarios are read-only here: ' + (j.reason || 'the directory is not writable') + '. You can still author, validate and preview.';
    set('scn_dir', j.dir ? 'in ' + j.dir : '');
    for (const id of ['scn_save', 'scn_delete']) {
      $(id).disabled = !scn.writable;
      $(id).title = scn.writable ? '' : j.reason || 'read-only';
    }
    for (const c of j.scenarios || []) {
      const li = el('li', { dataset: { name: c.name }, class: c.name === (select || scn.selected) ? 'selected' : null },
        el('span', { text: c.name }), ' ', el('span', { class: 'hint', text: `${bytes(c.bytes)} · ${when(c.modified_s)}` }));
      li.addEventListener('click', () => openScenario(c.name));
      ul.append(li);
    }
    if (!(j.scenarios || []).length) ul.append(el('li', { class: 'muted', text: j.dir ? 'no scenarios yet' : 'no directory: --scenarios-dir not given' }));
  }
  async function openScenario(name) {
    const r = await api('GET', '/api/scenarios/' + enc(name));
    if (!r.ok) { message('scn_message', `could not open ${name}: ${errText(r)}`, 'bad', r.status); return; }
    scn.selected = name;
    selectInList($('scn_list'), name);
    $('scn_name').value = name;
    scnEditor.value = r.json.text;
    clearScenarioResults();
    const filled = await fillScenarioBuilder(r.json.text);
    message('scn_message', `opened ${name}${filled ? '' : ' (its stages are not in the one-line form: edit them in the YAML)'}`, '');
  }
  function clearScenarioResults() {
    $('scn_diags').replaceChildren();
    $('scn_summary').replaceChildren();
    $('scn_previews').replaceChildren();
  }
  $('scn_new').addEventListener('click', async () => {
    scn.selected = null;
    selectInList($('scn_list'), null);
    $('scn_name').value = '';
    scnEditor.value = '';
    clearScenarioResults();
    for (const id of ['s_name', 's_description', 's_seed', 's_anchor']) $(id).value = '';
    $('s_speed').value = '60x';
    for (const k of SHARED) $('s_shared_' + k).checked = false;
    $('s_stages').replaceChildren();
    await addStage();
    message('scn_message', 'a new scenario: add its stages and write its YAML, or type it', '');
  });
  $('scn_reload').addEventListener('click', () => loadScenarios());

  /** Does a pack carry the technique (or, for a technique, one of its sub-techniques)? */
  function carries(p, tech) {
    return (p.mitre || []).some((m) => m === tech || m.startsWith(tech + '.'));
  }
  function fillTechniques(row, keep) {
    const a = cache.attack;
    const tactic = row.querySelector('select.tactic').value;
    const sel = row.querySelector('select.technique');
    const list = (a.techniques || []).filter((t) => !tactic || (t.tactics || []).includes(tactic));
    sel.replaceChildren(...list.map((t) => el('option', { value: t.id, text: `${t.id} ${t.name}` })));
    if (keep && list.some((t) => t.id === keep)) sel.value = keep;
    fillStageSources(row);
  }
  function fillStageSources(row, keep) {
    const tech = row.querySelector('select.technique').value;
    const sel = row.querySelector('select.source');
    const cur = keep || sel.value;
    const packs = (cache.packs && cache.packs.packs) || [];
    const yes = packs.filter((p) => tech && carries(p, tech)), no = packs.filter((p) => !(tech && carries(p, tech)));
    const g1 = el('optgroup', { label: yes.length ? `carry ${tech}` : `no pack carries ${tech || 'it'}` }, yes.map((p) => el('option', { value: p.id, text: p.id })));
    const g2 = el('optgroup', { label: 'other packs' }, no.map((p) => el('option', { value: p.id, text: p.id })));
    sel.replaceChildren(g1, g2);
    if (cur && packs.some((p) => p.id === cur)) sel.value = cur;
    else if (yes.length) sel.value = yes[0].id;
  }
  function renumberStages() {
    [...$('s_stages').children].forEach((tr, i) => { tr.firstChild.textContent = String(i + 1); });
  }
  async function addStage(st) {
    try { await Promise.all([ensureAttack(), ensurePacks()]); } catch (e) { message('scn_message', 'the ATT&CK table or the packs did not load: ' + e.message, 'bad'); return; }
    st = st || {};
    const a = cache.attack;
    const tactic = el('select', { class: 'tactic', 'aria-label': 'tactic' },
      (a.tactics || []).map((t) => el('option', { value: t.id, text: `${t.id} ${t.name}` })));
    const row = el('tr', { class: 'stage' },
      el('td', { text: '' }),
      el('td', {}, tactic),
      el('td', {}, el('select', { class: 'technique', 'aria-label': 'technique' })),
      el('td', {}, el('select', { class: 'source', 'aria-label': 'source pack' })),
      el('td', {}, el('input', { type: 'number', class: 'count', min: 1, value: st.count || 10, 'aria-label': 'count' })),
      el('td', {}, el('input', { class: 'start_offset', value: st.start_offset || '0s', 'aria-label': 'start offset' })),
      el('td', {}, el('input', { class: 'duration', value: st.duration || '1m', 'aria-label': 'duration' })),
      el('td', {}, el('input', { class: 'name wide', value: st.name || '', placeholder: 'optional', 'aria-label': 'stage name' })),
      el('td', {}, el('button', { type: 'button', class: 'small danger remove', text: '✕', title: 'remove this stage' })));
    if (st.tactic && (a.tactics || []).some((t) => t.id === st.tactic)) tactic.value = st.tactic;
    // A select shows its choice cut short in the table: its whole text is its tooltip.
    const titled = () => { for (const sel of row.querySelectorAll('select')) sel.title = sel.selectedOptions[0] ? sel.selectedOptions[0].textContent : ''; };
    tactic.addEventListener('change', () => { fillTechniques(row); titled(); });
    row.querySelector('select.technique').addEventListener('change', () => { fillStageSources(row); titled(); });
    row.querySelector('select.source').addEventListener('change', titled);
    row.querySelector('button.remove').addEventListener('click', () => { row.remove(); renumberStages(); });
    $('s_stages').append(row);
    fillTechniques(row, st.technique);
    if (st.source) fillStageSources(row, st.source);
    titled();
    renumberStages();
  }
  $('s_add').addEventListener('click', () => addStage());
  function scenarioYaml() {
    const v = (id) => $(id).value.trim();
    const out = [];
    if (v('s_name')) out.push('name: ' + yamlStr(v('s_name')));
    if (v('s_description')) out.push('description: ' + JSON.stringify(v('s_description')));
    out.push('schema_version: "2.0"');
    if (v('s_seed')) out.push('seed: ' + Number(v('s_seed')));
    if (v('s_anchor')) out.push('anchor: ' + JSON.stringify(v('s_anchor')));
    if (v('s_speed')) out.push('speed: ' + yamlStr(v('s_speed')));
    const shared = SHARED.filter((k) => $('s_shared_' + k).checked);
    if (shared.length) out.push('correlation:', `  shared: [${shared.join(', ')}]`);
    out.push('stages:');
    const rows = [...$('s_stages').children];
    if (!rows.length) out.push('  []');
    for (const tr of rows) {
      const q = (c) => tr.querySelector('.' + c).value.trim();
      const parts = [`tactic: ${q('tactic')}`, `technique: ${q('technique')}`, `source: ${q('source')}`,
        `count: ${Number(q('count')) || 1}`, `start_offset: ${yamlStr(q('start_offset') || '0s')}`, `duration: ${yamlStr(q('duration') || '0s')}`];
      if (q('name')) parts.unshift(`name: ${JSON.stringify(q('name'))}`);
      out.push(`  - { ${parts.join(', ')} }`);
    }
    return out.join('\n') + '\n';
  }
  $('s_write').addEventListener('click', () => {
    scnEditor.value = scenarioYaml();
    if (!$('scn_name').value.trim() && $('s_name').value.trim()) $('scn_name').value = withExt($('s_name').value.trim().replace(/[^A-Za-z0-9_.-]+/g, '-'));
    clearScenarioResults();
    message('scn_message', 'YAML written from the builder; validate, preview or save it', '');
  });
  /** The builder from a scenario's text when its stages are one-line `- { … }` maps. */
  async function fillScenarioBuilder(text) {
    const top = (k) => { const m = new RegExp('^' + k + ':\\s*(.+)$', 'm').exec(text); return m ? unquote(m[1]) : ''; };
    $('s_name').value = top('name');
    $('s_description').value = top('description');
    $('s_seed').value = top('seed');
    $('s_anchor').value = top('anchor');
    $('s_speed').value = top('speed');
    const sh = /^\s+shared:\s*\[([^\]]*)\]/m.exec(text);
    const shared = sh ? sh[1].split(',').map((x) => x.trim()) : [];
    for (const k of SHARED) $('s_shared_' + k).checked = shared.includes(k);
    $('s_stages').replaceChildren();
    const stages = [];
    for (const line of text.split('\n')) {
      const m = /^\s*-\s*\{(.*)\}\s*(#.*)?$/.exec(line);
      if (!m) continue;
      const st = {};
      for (const part of m[1].split(/,(?=\s*[a-z_]+\s*:)/)) {
        const i = part.indexOf(':');
        if (i > 0) st[part.slice(0, i).trim()] = unquote(part.slice(i + 1));
      }
      stages.push(st);
    }
    for (const st of stages) await addStage(st);
    return stages.length > 0 || !/^stages:/m.test(text);
  }
  function scenarioSeed() {
    const v = $('s_seed').value.trim();
    return v === '' ? undefined : Number(v);
  }
  async function validateScenario() {
    const r = await api('POST', '/api/scenarios/validate', { text: scnEditor.value });
    if (!r.ok) { message('scn_message', 'validation failed: ' + errText(r), 'bad', r.status); return null; }
    const v = r.json;
    showDiags($('scn_diags'), scnEditor, v.errors, v.warnings);
    message('scn_message', v.valid ? `valid${v.warnings.length ? `, ${v.warnings.length} warning(s)` : ''}` : `not valid: ${v.errors.length} error(s)`, v.valid ? 'ok' : 'bad');
    const out = $('scn_summary');
    out.replaceChildren();
    const s = v.summary;
    if (s) {
      const dl = el('dl', { class: 'kv' });
      kv(dl, [['name', s.name], ['seed', s.seed], ['speed', s.speed], ['events', int(s.events)], ['span', duration(s.span_s)], ['ATT&CK', s.attack_version]]);
      const tbody = el('tbody', {}, (s.stages || []).map((g) => el('tr', { class: 'stage-summary' },
        el('td', { text: g.index }), el('td', { text: g.name || '' }),
        el('td', { text: `${g.tactic} ${g.tactic_name || ''}` }), el('td', { text: `${g.technique} ${g.technique_name || ''}` }),
        el('td', { text: g.source }), el('td', { class: 'num', text: int(g.count) }),
        el('td', { class: 'num', text: `${duration(g.start_s)} – ${duration(g.end_s)}` }),
        el('td', {}, (g.draws || []).map((d) => el('span', { class: 'tag', text: `${d.name} ×${num(d.weight)}` }))),
        el('td', { text: (g.shows || []).join(', ') || '—' }))));
      out.append(dl, el('table', {}, el('thead', {}, el('tr', {}, ['#', 'name', 'tactic', 'technique', 'source', 'count', 'window', 'draws', 'shows'].map((h) => el('th', { text: h })))), tbody));
    }
    return v;
  }
  $('scn_validate').addEventListener('click', validateScenario);
  $('scn_preview').addEventListener('click', async () => {
    const body = { text: scnEditor.value, per_stage: 3 };
    const seed = scenarioSeed();
    if (seed !== undefined) body.seed = seed;
    const r = await api('POST', '/api/scenarios/preview', body);
    const out = $('scn_previews');
    out.replaceChildren();
    if (!r.ok) {
      message('scn_message', 'no preview: ' + errText(r), 'bad', r.status);
      if (r.json.errors) showDiags($('scn_diags'), scnEditor, r.json.errors, r.json.warnings);
      return;
    }
    out.append(el('h3', { text: 'The first events of each stage' }));
    for (const g of r.json.stages || []) {
      out.append(el('div', { class: 'preview-stage', dataset: { index: g.index } },
        el('div', { class: 'hint', text: `stage ${g.index}: ${g.technique} from ${g.source}` }),
        (g.events || []).map((e) => el('pre', { class: 'sample', text: `${e.time}  ${e.text}` }))));
    }
    message('scn_message', `preview of ${(r.json.stages || []).length} stage(s)`, 'ok');
  });
  $('scn_save').addEventListener('click', async () => {
    if (!scn.writable) return;
    const name = $('scn_name').value.trim();
    if (!name) { message('scn_message', 'give the file a name first', 'bad'); $('scn_name').focus(); return; }
    const file = withExt(name);
    $('scn_name').value = file;
    const r = await api('PUT', '/api/scenarios/' + enc(file), { text: scnEditor.value });
    if (r.ok) {
      scn.selected = r.json.name || file;
      message('scn_message', `saved ${scn.selected}`, 'ok', r.status);
      showDiags($('scn_diags'), scnEditor, [], []);
      await loadScenarios(scn.selected);
    } else {
      message('scn_message', 'not saved: ' + errText(r), 'bad', r.status);
      if (r.json.errors) showDiags($('scn_diags'), scnEditor, r.json.errors, r.json.warnings);
    }
  });
  $('scn_delete').addEventListener('click', async () => {
    if (!scn.writable) return;
    const name = $('scn_name').value.trim();
    if (!name) { message('scn_message', 'no file to delete', 'bad'); return; }
    if (Date.now() - scn.deleteArmed > 4000) {
      scn.deleteArmed = Date.now();
      message('scn_message', `click Delete again within 4 s to delete ${name}`, 'bad');
      return;
    }
    scn.deleteArmed = 0;
    const r = await api('DELETE', '/api/scenarios/' + enc(name));
    if (r.ok) {
      message('scn_message', `deleted ${name}`, 'ok', r.status);
      scn.selected = null;
      $('scn_name').value = '';
      scnEditor.value = '';
      await loadScenarios();
    } else {
      message('scn_message', 'not deleted: ' + errText(r), 'bad', r.status);
    }
  });
  onShow.scenarios = async () => {
    loadScenarios();
    try {
      const a = await ensureAttack();
      const v = String(a.version || '');
      set('s_attack', `${/att&ck/i.test(v) ? v : 'ATT&CK ' + v}: ${(a.tactics || []).length} tactics, ${(a.techniques || []).length} techniques`);
    } catch (e) {
      set('s_attack', 'the ATT&CK table did not load: ' + e.message);
    }
    if (!$('s_stages').children.length) await addStage();
  };

  // ---- start --------------------------------------------------------------------------
  loadInfo();
  showTab();
  if (currentTab() !== 'run') fillRunPickers();
  poll();
})();
