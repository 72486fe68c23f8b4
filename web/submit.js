// Submitting a job file (YAML or JSON, as snnctl submit reads it) from the page. On success the
// job's own page opens.
import { api } from './api.js';
import { h, errorLine, show } from './dom.js';
import { jobHref } from './queue.js';

const EXAMPLE = `name: hello
time_limit: 5m
task:
  command: /bin/sh
  args: ["-c", "echo hello from task $SNN_TASK_ID of job $SNN_JOB_ID on $SNN_NODE"]
  resources:
    cores: 4
    ksps: 100
`;

export function submitView(main) {
  const text = h('textarea', { id: 'job-file', rows: 14, spellcheck: 'false' }, EXAMPLE);
  const result = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    onsubmit: async (e) => {
      e.preventDefault();
      result.replaceChildren(h('p', { class: 'muted' }, 'Submitting…'));
      try {
        const r = await api('/v1/jobs', { method: 'POST', body: text.value,
                                           contentType: 'application/yaml' });
        location.hash = jobHref(r.tenant, r.tenant_job_id);
      } catch (err) {
        result.replaceChildren(errorLine(err.message));
      }
    },
  },
    h('p', {}, h('label', { for: 'job-file' }, 'Job file (YAML or JSON; docs: reference/job-file.md). ' +
      'A model: is read by snnctl, not here: give cores.')),
    text, h('p', {}, h('button', { type: 'submit', id: 'submit-job' }, 'Submit')), result);
  show(main, h('h1', {}, 'Submit a job'), form);
  return {};
}
