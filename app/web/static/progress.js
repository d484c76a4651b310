// The job page, live: asks the job's status every second while it is queued or running and
// updates the page in place; reloads it once the job has finished (its report, its release).
// Served by the service itself (Content-Security-Policy: script-src 'self').
"use strict";
(function () {
  const section = document.getElementById("job");
  if (!section) return;
  const url = "/web/jobs/" + encodeURIComponent(section.dataset.job) + "/progress";
  const text = (id, value) => {
    const node = document.getElementById(id);
    if (node) node.textContent = value;
  };
  function show(job) {
    section.dataset.status = job.status;
    const status = document.getElementById("job-status");
    status.textContent = job.status;
    status.className = "status s-" + job.status;
    text("job-phase", job.phase || "—");
    document.getElementById("job-progress").value = job.progress;
    text("job-percent", Math.round(job.progress * 100) + "%");
    let seen = false;
    for (const item of document.querySelectorAll("#job-phases li")) {
      const current = item.dataset.phase === job.phase;
      item.className = current ? "current" : seen || job.phase === null ? "" : "done";
      if (current) seen = true;
    }
  }
  async function poll() {
    let job;
    try {
      const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (!response.ok) return setTimeout(poll, 3000);
      job = await response.json();
    } catch (error) {
      return setTimeout(poll, 3000);
    }
    show(job);
    if (job.status === "succeeded" || job.status === "failed") {
      window.location.reload();
    } else {
      setTimeout(poll, 1000);
    }
  }
  setTimeout(poll, 1000);
})();
