"""Writing to every resource provider of an aggregate.

Shared by ``resource provider inventory set --aggregate`` and
``resource provider trait set/delete --aggregate``. Placement has no request
that writes many providers at once, so each member is written on its own:
the writes go to different providers, so they run concurrently on a bounded
thread pool; each is a compare-and-swap on the provider's generation, and a
lost race is re-read and retried for that provider only. The batch is not
atomic: a member that fails is reported and the others are still written.
"""

import logging

from osc_lib import exceptions

from osc_placement.resources import common

LOG = logging.getLogger(__name__)

PROVIDERS_URL = '/resource_providers'

# A provider whose generation keeps changing under us, or whose writes
# keep failing on the server, is given up on after this many attempts and
# counted as a failure.
MAX_ATTEMPTS = 8


class ProviderWriter:
    """Writes one provider, retrying what is safe to retry.

    Subclasses say what one attempt is (``_attempt(uuid, generation)``,
    which returns the result to show) and name what they do in ``action``
    ("set inventory"), which the log and failure lines use.

    Called once per provider, possibly from several threads at once; it
    keeps no state between calls. A 409 because the provider's generation
    moved, or a server error (5xx: an overloaded server, a locked SQLite
    database, a proxy timeout), is answered by another attempt with the
    generation forgotten, so the attempt reads the provider again. Every
    write is a compare-and-swap on the generation, so repeating it can
    never apply a change twice.
    """

    action = 'write'

    def __call__(self, provider):
        uuid = provider['uuid']
        generation = provider['generation']
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return self._attempt(uuid, generation)
            except Exception as exc:
                if attempt == MAX_ATTEMPTS or not common.is_retryable(exc):
                    raise
                LOG.debug('Failed to %s for resource provider %s (%s); '
                          'retrying (attempt %d)', self.action, uuid, exc,
                          attempt + 1)
                common.back_off(exc, attempt)
                # Whatever went wrong, the generation we have may be stale.
                generation = None

    def _attempt(self, uuid, generation):
        raise NotImplementedError


def add_provider_or_aggregate_argument(parser):
    """The positional of the commands that also write a whole aggregate,
    with upstream's help text."""
    parser.add_argument(
        'uuid', metavar='<uuid>',
        help='Name or UUID of the resource provider, or UUID of the '
             'aggregate if --aggregate is specified')


def aggregate_members(command, aggregate):
    """The providers of ``aggregate``, as ``GET /resource_providers`` lists
    them; an empty aggregate is an error, with upstream's text."""
    # A bare UUID (no "in:") is what upstream sends, and what the first
    # member_of filter accepts.
    providers = command.get_json(PROVIDERS_URL, member_of=aggregate)
    if not providers['resource_providers']:
        raise exceptions.CommandError(
            'No resource providers found in aggregate with uuid %s.'
            % aggregate)
    return providers['resource_providers']


def write_aggregate(command, aggregate, writer, progress_label):
    """Run ``writer`` on every member of ``aggregate``.

    Returns ``(providers, results)`` in the order the server listed the
    providers; if any member failed, each failure is logged and the command
    fails with a summary instead.
    """
    providers = aggregate_members(command, aggregate)
    progress = common.StderrProgress(progress_label)
    results = common.run_concurrently(writer, providers, progress=progress)
    report_failures(providers, results, writer.action)
    return providers, results


def report_failures(providers, results, action):
    """One error line per failed provider, then upstream's summary."""
    failed = 0
    for provider, result in zip(providers, results):
        if isinstance(result, Exception):
            failed += 1
            LOG.error('Failed to %s for resource provider %s: %s.',
                      action, provider['uuid'], result)
    if failed:
        raise exceptions.CommandError(
            'Failed to %s for %d of %d resource providers.'
            % (action, failed, len(providers)))
