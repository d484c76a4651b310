"""The job worker: the task a worker runs, the steps of a publication job, its progress, the
compute child and its hand-off, and the worker's loop.

It sits above the services and calls them; the services defer jobs through the queue below
them (:mod:`app.queue`, :func:`app.queue.submit`) and import nothing of this package
(docs/architecture.md; ``tests/test_layers.py``):

- :mod:`app.jobs.task`: the task a worker runs, registered on the queue;
- :mod:`app.jobs.context`: what a job carries, built once (:class:`~app.jobs.context.JobContext`);
- :mod:`app.jobs.publication`: the steps of a publication job, one transaction for the release;
- :mod:`app.jobs.audit`: the semantic audit, its own step after the release is committed;
- :mod:`app.jobs.progress`: the job's phase and progress, written to its row;
- :mod:`app.jobs.compute`, :mod:`app.jobs.handoff`: the core in a child process, and its input;
- :mod:`app.jobs.processes`: which process runs a job, and whether it is alive;
- :mod:`app.jobs.worker`: the worker (in-process or ``serialpub worker``) and job recovery.
"""
