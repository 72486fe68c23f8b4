// The page's frame: sign-in with an access token, the sections (#/jobs, #/jobs/TENANT/ID,
// #/pool, #/submit), and one event stream whose events go to the section shown.
import { api, ApiError, token, setToken, watchEvents } from './api.js';
import { h, errorLine, show } from './dom.js';
import { queueView } from './queue.js';
import { jobView } from './job.js';
import { poolView } from './pool.js';
import { submitView } from './submit.js';

const main = document.getElementById('main');
const live = document.getElementById('live');
const signOut = document.getElementById('sign-out');
let view = null;
let stopEvents = null;

function route() {
  const [path, query] = (location.hash.slice(1) || '/jobs').split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const section = parts[0] || 'jobs';
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.section === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (section === 'jobs' && parts.length === 3) view = jobView(main, parts[1], parts[2]);
  else if (section === 'pool') view = poolView(main);
  else if (section === 'submit') view = submitView(main);
  else view = queueView(main, params);
  document.title = 'snn: ' + main.querySelector('h1').textContent;
}

function signInForm(message) {
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', size: 48,
                             required: true });
  show(main, h('h1', {}, 'Sign in'),
    message ? errorLine(message) : null,
    h('form', {
      onsubmit: (e) => { e.preventDefault(); setToken(input.value.trim()); start(); },
    },
      h('p', {}, 'Paste an access token. Make one on a login host with ',
        h('code', {}, 'snnctl token create --ttl 7d'), '; it stays in this tab only.'),
      h('p', {}, h('label', { for: 'token' }, 'Access token'), input, ' ',
        h('button', { type: 'submit', id: 'sign-in' }, 'Sign in'))));
}

async function start() {
  if (stopEvents) { stopEvents(); stopEvents = null; }
  if (!token()) return signInForm('');
  try {
    await api('/v1/tokens');  // any read: is the token good?
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      setToken('');
      return signInForm(e.message);
    }
  }
  signOut.hidden = false;
  stopEvents = watchEvents((type, event) => { if (view && view.onEvent) view.onEvent(type, event); },
                           (text, ok) => { live.textContent = text; live.dataset.live = ok ? '1' : ''; });
  route();
}

window.addEventListener('hashchange', () => { if (token()) route(); });
signOut.addEventListener('click', () => {
  setToken('');
  signOut.hidden = true;
  if (stopEvents) { stopEvents(); stopEvents = null; }
  live.textContent = 'Not connected';
  signInForm('');
});
start();
