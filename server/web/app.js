// The page's entry: hash routing (#/<view>?<params>, every view restorable from its URL),
// the navigation bar, the read-token prompt (when the relay wants one) and error display.
import * as api from './api.js';
import { h, fill, errorBox, hashOf } from './util.js';
import { ServicesView } from './view_services.js';
import { ProfilesView } from './view_profiles.js';
import { FlameView } from './view_flame.js';
import { DiffView } from './view_diff.js';

const VIEWS = { services: ServicesView, profiles: ProfilesView, flame: FlameView, diff: DiffView };

export function parseHash(hash = location.hash) {
  const s = hash.replace(/^#\/?/, '');
  const q = s.indexOf('?');
  const name = q < 0 ? s : s.slice(0, q);
  return { name: VIEWS[name] ? name : 'services', params: new URLSearchParams(q < 0 ? '' : s.slice(q + 1)) };
}

class App {
  constructor() {
    this.main = document.getElementById('main');
    this.view = null;
    this.name = '';
    this.dialog = document.getElementById('token-dialog');
    this.tokenRequired = false;
    this.tokenOk = false;  // a token the relay accepted was entered or found
    this.waiters = [];     // resolves of askToken's promises, until a token is accepted
    this.reroute = false;  // show the current view again once a token is accepted
  }

  async start() {
    window.addEventListener('hashchange', () => this.route());
    document.getElementById('token-button').addEventListener('click', () => this.askToken(''));
    document.addEventListener('keydown', (e) => {
      if (e.key === '/' && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
        const s = this.main.querySelector('input[type="search"]');
        if (s) {
          e.preventDefault();
          s.focus();
        }
      }
    });
    try {
      await this.checkAccess();
    } catch (e) {
      fill(this.main, errorBox(e));
      return;
    }
    this.route();
  }

  async checkAccess() {
    const a = await api.access();
    this.tokenRequired = a.read_token_required;
    document.getElementById('token-button').hidden = !a.read_token_required;
    this.tokenOk = a.authorized;
    if (a.read_token_required && !a.authorized) {
      await this.askToken(api.token() ? 'The stored token was refused: enter another.' : '', false);
    }
  }

  // Show the token dialog until a token the relay accepts is entered; the promise resolves
  // then. With `reroute` (a view that met a 401, the token button) the current view is shown
  // again; else the caller goes on (start-up). A dialog closed without a token leaves a note
  // with a button to open it again.
  askToken(message, reroute = true) {
    const d = this.dialog;
    const input = d.querySelector('input');
    const note = d.querySelector('.token-note');
    note.textContent = message || 'This relay wants a read token for its API.';
    input.value = '';
    this.reroute = this.reroute || reroute;
    if (!d.open) d.showModal();
    d.querySelector('.token-forget').onclick = () => {
      api.setToken('');
      note.textContent = 'Token forgotten. Enter a read token.';
    };
    d.querySelector('form').onsubmit = (e) => this.submitToken(e, input, note);
    d.onclose = () => {
      if (this.waiters.length || !this.tokenOk) {
        fill(this.main, h('p', { class: 'status', text: 'The relay wants a read token for its API. ' }),
          h('button', { type: 'button', text: 'Enter a token', onclick: () => this.askToken('', false) }));
      }
    };
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async submitToken(e, input, note) {
    e.preventDefault();
    const t = input.value.trim();
    let ok = false;
    try {
      ok = !!t && (await api.access(t)).authorized;
    } catch {
      ok = false;
    }
    if (!ok) {
      note.textContent = 'The relay refused this token.';
      input.select();
      return;
    }
    api.setToken(t);
    this.tokenOk = true;
    const waiters = this.waiters.splice(0);
    const reroute = this.reroute;
    this.reroute = false;
    this.dialog.close();
    waiters.forEach((w) => w());
    if (reroute) this.route(true);
  }

  route(force = false) {
    const { name, params } = parseHash();
    if (name !== this.name || !this.view) {
      if (this.view) this.view.unmount();
      this.name = name;
      this.view = new VIEWS[name](this);
      fill(this.main);
      this.view.mount(this.main);
      force = true;
    }
    for (const a of document.querySelectorAll('nav a')) {
      if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    this.view.update(params, force);
  }

  // Go to a view (a new history entry; the router runs).
  go(name, params) {
    location.hash = hashOf(name, params);
  }

  // Record the current view's state in the URL without running the router: `push` makes a
  // history entry (zooms), else the entry is replaced (typing in a search box).
  record(name, params, push = false) {
    const hsh = hashOf(name, params);
    if (hsh === location.hash) return;
    if (push) history.pushState(null, '', hsh);
    else history.replaceState(null, '', hsh);
  }

  // Show an error in `where` (an element), or ask for a token on a 401.
  fail(e, where) {
    if (e && e.name === 'StaleError') return;
    if (e && e.status === 401) {
      this.tokenOk = false;
      this.askToken('The relay refused the token: enter a read token.');
      return;
    }
    if (where) fill(where, errorBox(e));
  }
}

const app = new App();
app.start();
