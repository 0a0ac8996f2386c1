# SPDX-License-Identifier: Apache-2.0
"""Writing to every resource provider of an aggregate.

Shared by ``resource provider inventory set --aggregate`` and
``resource provider trait set/delete --aggregate``, which all go through
``edit_aggregate``: every member is read and planned first, sharing
providers and protected traits are left alone unless asked, a dry run
shows each change, and removals need confirmation. Placement has no request
that writes many providers at once, so each member is written on its own:
the writes go to different providers, so they run concurrently on a bounded
thread pool; each is a compare-and-swap on the provider's generation, and a
lost race is re-read and retried for that provider only. The batch is not
atomic: a member that fails is reported and the others are still written.
"""

import collections
import logging
import os

from osc_lib import exceptions

from osc_placement import provider_rules
from osc_placement.resources import common
from osc_placement.resources import providers
from osc_placement import version

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


# --- Bulk edits that cannot hurt: plan every member, show, confirm, write.
#
# An aggregate-wide edit first reads every member and works out what it
# would add, change and remove there (a ``Plan``); nothing is written until
# every read succeeded. Sharing providers are left out unless asked for,
# the protected traits are kept unless named, a dry run shows the plans,
# and plans that remove anything are written only once confirmed.

# Traits whose loss changes what the scheduler does to a whole provider:
# a disabled compute host would take instances again, a shared disk would
# stop being shared. A bulk edit removes them only when told so by name.
PROTECTED_TRAITS = ('COMPUTE_STATUS_DISABLED', provider_rules.SHARING_TRAIT)
SHARING_TRAIT = provider_rules.SHARING_TRAIT

ADDED, REMOVED, CHANGED = '+', '-', '~'
PLAN_COLUMNS = ('resource_provider', 'name', 'change')

# Scripts written for upstream osc-placement (and upstream's own tests)
# replace across an aggregate without being asked and parse upstream's
# dry-run rows (what each provider would have). Set to "upstream", this
# variable keeps those two behaviours; sharing providers and protected
# traits are still left alone.
BULK_EDITS_ENV = 'OSC_PLACEMENT_BULK_EDITS'


def upstream_bulk_edits():
    """True when the user asked for upstream's unconfirmed bulk edits."""
    return os.environ.get(BULK_EDITS_ENV, '').strip().lower() == 'upstream'


class Plan:
    """What an edit would do to one provider, as read before any write.

    ``changes`` is a list of ``(sign, item)``: ``+`` added, ``-`` removed,
    ``~`` changed (an inventory whose fields differ). ``kept`` names the
    protected traits a replace keeps.
    """

    def __init__(self, provider, state, new, changes, kept=()):
        self.provider = provider
        self.state = state
        self.new = new
        self.changes = changes
        self.kept = list(kept)

    @property
    def uuid(self):
        return self.provider['uuid']

    @property
    def label(self):
        return provider_label(self.provider)

    @property
    def removals(self):
        return [item for sign, item in self.changes if sign == REMOVED]


class State:
    """One provider as read for a plan: its generation and the part the
    edit rewrites (traits, or inventories)."""

    def __init__(self, generation, current):
        self.generation = generation
        self.current = current


def provider_label(provider):
    """``name (uuid)``: how the bulk commands name a provider to people."""
    return '%s (%s)' % (provider.get('name') or '-', provider['uuid'])


class BulkEdit:
    """What a bulk command does to one provider; ``edit_aggregate`` runs it.

    Subclasses say how a provider is read (``read``: a ``State``), what it
    should become (``target``: ``(new, kept)``), how the two differ
    (``diff``) and how it is written (``write``, a compare-and-swap on the
    generation that returns what the provider then has). ``nouns`` names
    what is changed ("traits"), ``action`` the failure lines' verb.
    """

    action = 'write'
    nouns = 'items'

    def read(self, uuid):
        raise NotImplementedError

    def target(self, current):
        raise NotImplementedError

    def diff(self, current, new):
        raise NotImplementedError

    def write(self, uuid, generation, new):
        raise NotImplementedError

    def plan(self, provider, state):
        new, kept = self.target(state.current)
        return Plan(provider, state, new, self.diff(state.current, new),
                    kept)


def add_bulk_safety_arguments(parser, nouns):
    """``--include-sharing`` and ``--yes``, for the --aggregate paths."""
    parser.add_argument(
        '--include-sharing', action='store_true',
        help='With --aggregate, change the sharing providers of the '
             'aggregate too (those with trait %s, such as a shared '
             'disk). They are left alone by default.' % SHARING_TRAIT)
    parser.add_argument(
        '--yes', action='store_true',
        help='With --aggregate, confirm that %s may be removed. Without '
             'it a change that removes any is shown and asked about on a '
             'terminal, and refused (nothing changed, exit 1) '
             'elsewhere.' % nouns)


BULK_ONLY_OPTIONS = ('include_sharing', 'yes', 'remove_protected')


def check_bulk_only_options(parser, parsed_args):
    """The bulk safety options mean nothing for one provider: say so."""
    given = ['--' + dest.replace('_', '-') for dest in BULK_ONLY_OPTIONS
             if getattr(parsed_args, dest, None)]
    if given and not parsed_args.aggregate:
        verb = 'applies' if len(given) == 1 else 'apply'
        parser.error('%s %s only with --aggregate.'
                     % (', '.join(given), verb))


def edit_aggregate(command, parsed_args, edit, progress_label):
    """Plan ``edit`` on every member of the aggregate, then write it.

    Returns the plans and, unless this is a dry run, each plan's
    ``Outcome``. Sharing providers are left out unless
    ``--include-sharing``; a plan that removes anything is written only
    with ``--yes`` or a "y" typed at a terminal. A member that fails is
    reported with the members that were changed; the command then fails.
    """
    members = aggregate_members(command, parsed_args.uuid)
    if not parsed_args.include_sharing:
        members = leave_sharing_alone(command, parsed_args.uuid, members)
    plans = read_plans(command, members, edit)
    tell_kept(command, plans)
    if not any(plan.changes for plan in plans):
        tell(command, 'Nothing to change: the %d resource providers '
             'already are as asked.' % len(plans))
    if parsed_args.dry_run:
        return plans, None
    confirm_removals(command, parsed_args, plans, edit)
    writer = PlannedWriter(edit, plans)
    progress = common.StderrProgress(progress_label)
    outcomes = common.run_concurrently(
        writer, [{'uuid': plan.uuid, 'generation': plan.state.generation}
                 for plan in plans], progress=progress)
    report_outcomes(command, plans, outcomes, edit.action)
    return plans, outcomes


def read_plans(command, members, edit):
    """Each member's plan; if any read fails, nothing has been written and
    the command fails with the reason."""
    def read_one(provider):
        return edit.plan(provider, read_retrying(edit, provider['uuid']))

    progress = common.StderrProgress('Reading resource providers')
    results = common.run_concurrently(read_one, members, progress=progress)
    for provider, result in zip(members, results):
        if isinstance(result, Exception):
            raise exceptions.CommandError(
                'Could not read resource provider %s: %s. Nothing was '
                'changed.' % (provider_label(provider), result))
    return results


def read_retrying(edit, uuid):
    return common.retry_server_errors(edit.read, uuid, attempts=MAX_ATTEMPTS)


def leave_sharing_alone(command, aggregate, members):
    """The members to change: all but the sharing providers, whose traits
    and inventory serve every host of the aggregate."""
    sharing = sharing_members(command, aggregate, members)
    if not sharing:
        return members
    tell(command, 'Left alone: %s, sharing resources with the aggregate '
         '(trait %s); --include-sharing changes them too.'
         % (', '.join(provider_label(provider) for provider in members
                      if provider['uuid'] in sharing), SHARING_TRAIT))
    others = [provider for provider in members
              if provider['uuid'] not in sharing]
    if not others:
        raise exceptions.CommandError(
            'Every resource provider in aggregate %s shares resources '
            '(trait %s), so nothing was changed; give --include-sharing to '
            'change them.' % (aggregate, SHARING_TRAIT))
    return others


def sharing_members(command, aggregate, members):
    """The UUIDs of the aggregate's sharing providers.

    One listing filtered by the trait answers (feature
    ``provider_required``, asked for at its version if the command's is
    older: a read, and the only way to be sure); a server without that
    filter is asked each member's traits instead.
    """
    try:
        listed = command.placement.request(
            'GET', PROVIDERS_URL,
            params={'member_of': aggregate, 'required': SHARING_TRAIT},
            **at_least(command, 'provider_required')).json()
    except Exception as exc:
        if not is_too_new(exc):
            raise
        return sharing_by_traits(command, members)
    return {provider['uuid'] for provider in listed['resource_providers']}


def sharing_by_traits(command, members):
    """For a server without the ``required`` filter: each member's traits
    (none on a server without traits)."""
    def get_json(url):
        return command.placement.request(
            'GET', url, **at_least(command, 'traits')).json()

    try:
        traits = providers.read_parts(
            get_json, [provider['uuid'] for provider in members],
            parts=('traits',))
    except Exception as exc:
        if not is_too_new(exc):
            raise
        return set()
    return {uuid for uuid, parts in traits.items()
            if SHARING_TRAIT in parts['traits']}


def at_least(command, feature):
    """The request arguments that ask at ``feature``'s microversion when
    the command's own is older."""
    if version.supports(version.get_version(command), feature):
        return {}
    return {'version': version.since(feature)}


def is_too_new(exc):
    """The server refused the microversion or the query (406, 400), or
    the route does not exist at its version (404)."""
    status = getattr(exc, 'http_status', None) or getattr(
        exc.__cause__, 'http_status', None)
    return status in (400, 404, 406)


def tell_kept(command, plans):
    for plan in plans:
        if plan.kept:
            tell(command, 'Kept on %s: %s (protected; a bulk edit removes '
                 'it only when named, see --remove-protected).'
                 % (plan.label, ', '.join(plan.kept)))


def tell(command, text):
    command.app.stderr.write(text + '\n')


def plan_rows(plans, item_row):
    """Dry-run rows: one per change, ``PLAN_COLUMNS`` then ``item_row``'s
    columns for the item (a trait's name, an inventory's fields)."""
    return [(plan.uuid, plan.provider.get('name') or '', sign)
            + item_row(plan, sign, item)
            for plan in plans for sign, item in plan.changes]


def changes_text(plans):
    """One line per provider that would change: ``name (uuid): -A +B``."""
    return '\n'.join(
        '  %s: %s' % (plan.label, ' '.join(sign + str(item)
                                           for sign, item in plan.changes))
        for plan in plans if plan.changes)


def confirm_removals(command, parsed_args, plans, edit):
    """Go on only if nothing is removed, or the removal is confirmed.

    Confirmation is ``--yes`` or "y" typed at a terminal after the
    changes are shown. Anywhere else the changes are printed and the
    command fails before writing anything.
    """
    removing = [plan for plan in plans if plan.removals]
    if not removing or parsed_args.yes or upstream_bulk_edits():
        return
    what = '%s from %d of %d resource providers' % (
        edit.nouns, len(removing), len(plans))
    tell(command, 'These changes remove %s:\n%s'
         % (what, changes_text(plans)))
    common.confirm_removal(command, 'Remove them?', what,
                           'Give --yes to confirm (--dry-run shows every '
                           'change).')


Outcome = collections.namedtuple('Outcome', 'written current')


class PlannedWriter(ProviderWriter):
    """Writes each provider's plan with its generation as read.

    The first attempt writes the plan shown; after a lost race (or a
    server error) the provider is read and planned again, and if the new
    plan removes something the one shown did not, that provider is not
    written and fails, since nobody agreed to that removal. A plan
    without changes is not written.
    """

    def __init__(self, edit, plans):
        self.edit = edit
        self.action = edit.action
        self.plans = {plan.uuid: plan for plan in plans}

    def _attempt(self, uuid, generation):
        shown = self.plans[uuid]
        plan = shown
        if generation is None:
            plan = self.edit.plan(shown.provider, self.edit.read(uuid))
            unshown = set(plan.removals) - set(shown.removals)
            if unshown:
                raise exceptions.CommandError(
                    'it changed after it was read, and the change would now '
                    'also remove %s; run the command again'
                    % ', '.join(sorted(str(item) for item in unshown)))
        if not plan.changes:
            return Outcome(False, plan.state.current)
        return Outcome(True, self.edit.write(
            uuid, plan.state.generation, plan.new))


def report_outcomes(command, plans, outcomes, action):
    """On any failure: one line per failed provider, the providers that
    were changed, then upstream's summary as the command's error."""
    failed = [(plan, outcome) for plan, outcome in zip(plans, outcomes)
              if isinstance(outcome, Exception)]
    if not failed:
        return
    for plan, error in failed:
        LOG.error('Failed to %s for resource provider %s: %s.',
                  action, plan.uuid, error)
    changed = [plan.label for plan, outcome in zip(plans, outcomes)
               if isinstance(outcome, Outcome) and outcome.written]
    if changed:
        tell(command, 'Changed: %s. The failed resource providers were '
             'not changed.' % ', '.join(changed))
    else:
        tell(command, 'No resource provider was changed.')
    raise exceptions.CommandError(
        'Failed to %s for %d of %d resource providers.'
        % (action, len(failed), len(plans)))
