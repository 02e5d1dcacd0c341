// Services: every service the relay holds profiles of, with its sources, profile count,
// last upload and events; a search box (#/services?q=) narrows the list.
import * as api from './api.js';
import { h, fill, fmtAgo, fmtTime, hashOf } from './util.js';

export class ServicesView {
  constructor(app) {
    this.app = app;
    this.data = null;
  }

  mount(main) {
    this.search = h('input', {
      type: 'search', id: 'service-search', placeholder: 'Search services  ( / )',
      'aria-label': 'Search services', autocomplete: 'off',
      oninput: () => {
        this.app.record('services', { q: this.search.value });
        this.render();
      },
    });
    this.status = h('p', { class: 'status', 'aria-live': 'polite' });
    this.body = h('div', { class: 'table-wrap' });
    main.append(
      h('div', { class: 'view-head' }, h('h1', { text: 'Services' }), this.search),
      this.status, this.body);
  }

  unmount() {}

  async update(params, force) {
    this.search.value = params.get('q') || '';
    if (this.data && !force) {
      this.render();
      return;
    }
    this.status.textContent = 'Loading…';
    try {
      this.data = (await api.getJSON('services', {}, api.ticket('services'))).services;
      this.render();
    } catch (e) {
      if (e.name === 'StaleError') return;
      this.status.textContent = '';
      this.app.fail(e, this.body);
    }
  }

  render() {
    const q = this.search.value.trim().toLowerCase();
    const rows = this.data.filter((s) => !q || s.name.toLowerCase().includes(q));
    this.status.textContent = this.data.length === 0
      ? 'No profiles yet: send some (see the README), then reload.'
      : `${rows.length} of ${this.data.length} services`;
    const table = h('table', { class: 'grid services' },
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col', text: 'Service' }),
        h('th', { scope: 'col', text: 'Sources' }),
        h('th', { scope: 'col', class: 'num', text: 'Profiles' }),
        h('th', { scope: 'col', text: 'Last seen' }),
        h('th', { scope: 'col', text: 'Events (metrics)' }),
        h('th', { scope: 'col', text: 'Open' }))),
      h('tbody', {}, rows.map((s) => this.row(s))));
    fill(this.body, rows.length ? table : '');
  }

  row(s) {
    const events = Object.entries(s.events || {}).map(([ev, ms]) => `${ev} (${ms.join(', ')})`);
    return h('tr', { 'data-service': s.name },
      h('th', { scope: 'row' },
        h('a', { href: hashOf('profiles', { service: s.name }), class: 'service-link', text: s.name })),
      h('td', {}, (s.sources || []).map((x) => h('span', { class: 'chip', text: x }))),
      h('td', { class: 'num', text: String(s.profiles) }),
      h('td', { title: fmtTime(s.last_received_at), text: fmtAgo(s.last_received_at) }),
      h('td', { class: 'events', text: events.join('; ') }),
      h('td', {}, h('a', { href: hashOf('flame', { service: s.name }), text: 'Merged flamegraph' })));
  }
}
