// Submitting a job file (YAML or JSON, as snnctl submit reads it) from the page, with its model
// file if one is chosen (a NIR export or a JSON model: sent as a form upload, which the master
// reads as snnctl would). On success the job's own page opens.
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
  const model = h('input', { type: 'file', id: 'model-file', accept: '.nir,.json' });
  const result = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    onsubmit: async (e) => {
      e.preventDefault();
      result.replaceChildren(h('p', { class: 'muted' }, 'Submitting…'));
      try {
        let body = text.value;
        if (model.files.length > 0) {
          body = new FormData();
          body.append('job', new Blob([text.value], { type: 'application/yaml' }), 'job.yaml');
          body.append('model', model.files[0], model.files[0].name);
        }
        const r = await api('/v1/jobs', { method: 'POST', body,
                                           contentType: 'application/yaml' });
        location.hash = jobHref(r.tenant, r.tenant_job_id);
      } catch (err) {
        result.replaceChildren(errorLine(err.message));
      }
    },
  },
    h('p', {}, h('label', { for: 'job-file' }, 'Job file (YAML or JSON; docs: reference/job-file.md). ' +
      'With a model file, its cores come from the model: leave cores out.')),
    text,
    h('p', {}, h('label', { for: 'model-file' }, 'Model (optional: a NIR file or a JSON model) '),
      model),
    h('p', {}, h('button', { type: 'submit', id: 'submit-job' }, 'Submit')), result);
  show(main, h('h1', {}, 'Submit a job'), form);
  return {};
}
