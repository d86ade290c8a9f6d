"""Score sampled finished runs: each owed score is claimed by one worker, graded, recorded.

Every worker runs a :class:`GraderRunner`. It claims owed scores under a lease
(:mod:`plait.server.queue.scores`: ``SKIP LOCKED``, so two workers never grade
the same run with the same grader at once), builds the run's trajectory
(:mod:`plait.server.queue.trajectories`), calls the grader within the spec's
``evaluation.timeout`` and records the score, or the failure with its error.
Nothing here writes to the run: a grader's failure never changes how it ended.

A worker that stops while grading hands its claims back (another worker grades
them at once); one that dies leaves them to its lease, which outlasts the
longest grader time a spec may set.
"""

from __future__ import annotations

import asyncio
import logging

from plait.engine.run import GraderFailed, Score, grade
from plait.engine.store import Pool
from plait.server.auth.tenant_secrets import SecretSources
from plait.server.operations import metrics
from plait.server.queue import runs, scores
from plait.server.queue.scores import ScoreJob
from plait.server.queue.trajectories import trajectory
from plait.server.workers.execution import GraphCache

log = logging.getLogger(__name__)

#: Scores one worker grades at once.
BATCH = 4
#: The longest ``evaluation.timeout`` a spec may set, plus room to record the result.
LEASE_SECONDS = 660.0
#: Claims of one score (its workers died) before it fails as ``worker lost``.
MAX_ATTEMPTS = 3


class GraderRunner:
    """Claims and grades owed scores; call :meth:`grade_due` now and then."""

    def __init__(self, pool: Pool, owner: str, graphs: GraphCache) -> None:
        self.pool = pool
        self.owner = owner
        self.graphs = graphs
        self._secrets = SecretSources.from_env(pool)

    async def grade_due(self) -> int:
        """Grade what is owed now (up to :data:`BATCH`); return how many were claimed."""
        claimed = await scores.claim(self.pool, self.owner, BATCH, LEASE_SECONDS, MAX_ATTEMPTS)
        if claimed:
            await asyncio.gather(*(self._grade(job) for job in claimed))
        return len(claimed)

    async def _grade(self, job: ScoreJob) -> None:
        try:
            result: Score | str = await self._score(job)
        except asyncio.CancelledError:
            # Stopping (SIGTERM): hand the claim back so another worker grades it now.
            await asyncio.shield(scores.release(self.pool, job, self.owner))
            raise
        if isinstance(result, str):
            log.warning("grader %s of run %s failed: %s", job.grader, job.run_id, result)
            recorded = await scores.settle(self.pool, job, self.owner, error=result)
        else:
            recorded = await scores.settle(
                self.pool, job, self.owner, score=result.score, reason=result.reason
            )
        if recorded:
            score = None if isinstance(result, str) else result.score
            metrics.run_scored(job.graph, job.version, job.grader, score)

    async def _score(self, job: ScoreJob) -> Score | str:
        """The grader's score of the job's run, or why there is none."""
        run = await runs.get_run(self.pool, job.run_id, tenant=job.tenant)
        if run is None:
            return "the run was deleted before it was graded"
        try:
            compiled = await self.graphs.get(job.graph, job.version, job.tenant)
            data = await trajectory(self.pool, run, compiled)
            return await grade(
                compiled.loaded, job.grader, data, secrets=self._secrets.of(job.tenant)
            )
        except GraderFailed as failed:
            return str(failed)
        except Exception as exc:  # reading the run or its version failed: record, never raise
            log.exception("grading run %s with %s failed", job.run_id, job.grader)
            return f"{type(exc).__name__}: {exc}"
