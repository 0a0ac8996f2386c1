# SPDX-License-Identifier: Apache-2.0
"""Placement judged against Nova: leaked allocations, stale providers,
consumer types (``consumer audit``, ``stale list``, ``consumer type
sync``); the verdicts are ``osc_placement.audit``'s.

A write follows one rule: a consumer's allocations and generation are
read, then Nova is asked again about that consumer, then the write
carries that generation. A consumer Nova changed after the read is left
alone (the write loses the generation race); one Nova changed before it
is judged on what Nova says after.
"""

import collections

from cliff import lister
from osc_lib import exceptions

from osc_placement import audit
from osc_placement import compute
from osc_placement import provider_rules
from osc_placement.resources import bulk
from osc_placement.resources import common
from osc_placement.resources import consumer as consumers
from osc_placement.resources import providers
from osc_placement import version

PROVIDERS_URL = '/resource_providers'
CONSUMER_URL = '/allocations/{uuid}'
# Writes need consumer generations and nothing later: the audit rewrites
# a consumer as Nova does, keeping its type.
WRITE_VERSION = version.since('consumer_generations')
TYPED_WRITE_VERSION = version.since('consumer_types')

# nova-manage placement audit's exit codes; 1 is an error.
NOTHING_FOUND, FOUND, FOUND_AND_DELETED, FAILURE = 0, 3, 4, 1

AUDIT_COLUMNS = (
    ('consumer_uuid', 'base'),
    ('problem', 'base'),
    ('detail', 'base'),
    ('providers', 'base'),
    ('resources', 'base'),
    ('project_id', 'base'),
    ('user_id', 'base'),
    ('consumer_type', 'consumer_types'),
)
RESULT_COLUMN = 'result'

# What became of one thing a command meant to change: done, left alone
# for a reason (still found; run again), or failed (an error).
DONE, LEFT, FAILED = 'done', 'left', 'failed'
Outcome = collections.namedtuple('Outcome', 'status text')
CHANGED = Outcome(LEFT, 'left alone: changed since read')
UNDECIDED = Outcome(LEFT, 'left alone: cannot tell which tree is the '
                          'server\'s')


def exit_status(outcomes):
    """1 when anything failed, 4 when everything was done, else 3."""
    statuses = {outcome.status for outcome in outcomes}
    if FAILED in statuses:
        return FAILURE
    return FOUND_AND_DELETED if statuses <= {DONE} else FOUND


class ExitStatus:
    """A command whose exit status is ``self.exit_code``, set by
    ``take_action``: nova-manage placement audit's codes."""

    def run(self, parsed_args):
        self.exit_code = NOTHING_FOUND
        status = super().run(parsed_args)
        return status or self.exit_code


def add_scope_options(parser):
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        '--resource-provider', metavar='<provider>',
        help='Only consumers holding allocations in the tree of this '
             'provider (UUID or name)')
    scope.add_argument(
        '--aggregate', metavar='<aggregate_uuid>',
        help='Only consumers holding allocations in the trees of this '
             'aggregate\'s providers')


def add_delete_options(parser, what):
    parser.add_argument(
        '--delete', action='store_true',
        help='Remove %s (confirmation needed)' % what)
    parser.add_argument(
        '--yes', action='store_true',
        help='Confirm that %s may be removed; without it the command asks '
             'at a terminal and refuses anywhere else' % what)


def check_delete_options(parsed_args):
    if parsed_args.yes and not parsed_args.delete:
        raise exceptions.CommandError('--yes confirms --delete; give both '
                                      'or neither.')


class CloudRead:
    """What every audit reads of Placement: providers, their trees, the
    sharing ones and the consumers in scope with their allocations."""

    def __init__(self, command):
        self.command = command
        self.every = command.get_json(PROVIDERS_URL)['resource_providers']
        self.root_of = {provider['uuid']: providers.root_of(provider)
                        for provider in self.every}
        self.sharing = {provider['uuid'] for provider in command.get_json(
            PROVIDERS_URL,
            required=provider_rules.SHARING_TRAIT)['resource_providers']}
        self._names = {provider['uuid']: provider['name']
                       for provider in self.every}

    def trees(self, nova):
        return audit.Trees(self.root_of, self.sharing,
                           audit.nova_roots(self.every, nova))

    def scope(self, parsed_args):
        """The providers whose consumers are looked at, and a label."""
        if parsed_args.resource_provider:
            found = common.find_provider(self.command,
                                         parsed_args.resource_provider)
            members = [found]
            where = 'the tree of %s' % parsed_args.resource_provider
        elif parsed_args.aggregate:
            members = self.command.get_json(
                PROVIDERS_URL,
                member_of=parsed_args.aggregate)['resource_providers']
            if not members:
                raise exceptions.CommandError(
                    'No resource provider is in aggregate %s.'
                    % parsed_args.aggregate)
            where = 'aggregate %s' % parsed_args.aggregate
        else:
            return self.every, 'the cloud'
        return consumers.in_trees_of(self.every, members), where

    def consumers_of(self, listed):
        """Every consumer holding allocations on ``listed``, each with
        the allocations read there, in the form of GET
        /allocations/{consumer}'s ``allocations`` member."""
        read = providers.read_parts(
            self.command.get_json, [provider['uuid'] for provider in listed],
            parts=(providers.ALLOCATIONS_PART,),
            progress=common.StderrProgress('providers'), skip_missing=True)
        held = {}
        for uuid, parts in read.items():
            for consumer, allocation in parts[
                    providers.ALLOCATIONS_PART].items():
                held.setdefault(consumer, {'allocations': {}})[
                    'allocations'][uuid] = allocation
        return dict(sorted(held.items()))

    def details(self, uuids):
        """``{consumer: GET /allocations/{consumer}}``, concurrently."""
        uuids = list(uuids)
        return dict(zip(uuids, providers.results_or_raise(
            common.run_concurrently(
                lambda uuid: providers.get_retrying(
                    self.command.get_json, CONSUMER_URL.format(uuid=uuid)),
                uuids, progress=common.StderrProgress('consumers')))))

    def name(self, uuid):
        return self._names.get(uuid, uuid)


def nova_client(command):
    return compute.ComputeClient.from_client_manager(
        command.app.client_manager)


def read_nova(client, servers=True, hypervisors=True, flavors=False):
    """Nova's view, of the lists a command needs."""
    # Migrations before servers: a migration that ends in between is
    # then seen with an idle server, as over; one that starts in between
    # is not seen at all. Never a new move taken for a stuck one.
    migrations = client.migrations()
    return audit.NovaView(
        client.servers() if servers else (), migrations,
        client.hypervisors() if hypervisors else (),
        client.flavors() if flavors else ())


def write_each(write, items):
    """``write(item)`` for each, concurrently, a server error retried;
    for each item None when written, else the Outcome that says why not:
    changed since read (a lost consumer generation race) or failed. Each
    write stands alone: one failure does not stop the others."""
    outcomes = common.run_concurrently(
        lambda item: common.retry_server_errors(
            write, item, attempts=providers.MAX_ATTEMPTS), items)
    return [None if not isinstance(outcome, Exception)
            else CHANGED if common.is_generation_conflict(outcome)
            else Outcome(FAILED, 'failed: %s' % outcome)
            for outcome in outcomes]


class AuditConsumer(ExitStatus, common.PlacementCommand, lister.Lister):
    """Find the consumers Nova does not account for.

    Every consumer holding allocations in the cloud (or in the trees of
    --resource-provider or of --aggregate's providers) is judged against
    Nova's servers and migrations, read from the compute API of the same
    cloud (admin only). A live server holding one compute tree, and a
    migration under way, are fine. The problems:

    - ``orphaned``: no server or migration in Nova has the consumer's
      UUID (a server deleted while its host was down, say);
    - ``migration-finished``: the consumer is a migration that is over
      (completed, confirmed, reverted, failed, error, cancelled, done,
      or under way by its status while its server is idle or gone) and
      still holds allocations;
    - ``doubled``: a live server holds allocations in more than one
      compute tree (sharing providers aside) and no migration of it is
      under way (an evacuation whose source never came back, say).

    A consumer is Nova's when its type is INSTANCE or MIGRATION, or when
    it holds one of the classes Nova allocates for servers (VCPU, PCPU,
    MEMORY_MB, DISK_GB, VGPU, FPGA, PGPU, PCI devices, port bandwidth and
    packet rate, MEM_ENCRYPTION_CONTEXT, and any class a flavor asks for)
    in the tree of one of Nova's compute nodes. Other consumers are never
    reported or touched; a note on stderr counts them.

    Each problem is confirmed with Nova once more after the consumer's
    allocations and generation are read. With --delete the problems are
    then removed, once confirmed (--yes, or "y" at a terminal): an
    orphaned or finished migration consumer loses all its allocations,
    handed back to its server when the server runs where the migration
    holds and holds nothing there itself; a doubled server loses those
    outside the tree of the node Nova has it on. Each write carries the
    generation read, so a consumer changed meanwhile (by Nova, say) is
    left alone and its row says so.

    Exit status, as ``nova-manage placement audit``'s: 0 nothing found,
    3 problems found (and some left alone, with --delete), 4 problems
    found and all removed, 1 an error. Needs ``--os-placement-api-version
    {consumer_generations}`` or later and Nova's compute API at
    microversion 2.69 or later.

    Examples::

        openstack resource provider consumer audit
        openstack resource provider consumer audit --aggregate <uuid> \\
            --delete --yes
    """

    required_feature = 'consumer_generations'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_scope_options(parser)
        add_delete_options(parser, 'the allocations found')
        return parser

    def take_action(self, parsed_args):
        check_delete_options(parsed_args)
        cloud = CloudRead(self)
        listed, where = cloud.scope(parsed_args)
        whole_cloud = not (parsed_args.resource_provider
                           or parsed_args.aggregate)
        # Placement before Nova: a consumer whose server or migration
        # Nova made later is never taken for a leak.
        held = cloud.consumers_of(listed)
        if not whole_cloud:
            # Only its own allocations name a consumer's other trees.
            held = cloud.details(held)
        client = nova_client(self)
        nova = read_nova(client, flavors=True)
        trees = cloud.trees(nova)
        details = cloud.details(self._suspects(held, nova, trees,
                                               whole_cloud))
        findings = self._confirmed(details, client, nova, trees, cloud)
        self._note_others(held, details, nova, trees)
        ver = version.get_version(self)
        columns = tuple(column for column, feature in AUDIT_COLUMNS
                        if version.supports(ver, feature))
        if not findings:
            bulk.tell(self, 'No consumer in %s lacks a server or a '
                            'migration under way in Nova (%d consumers '
                            'looked at).' % (where, len(held)))
            return columns, []
        self.exit_code = FOUND
        results = {}
        if parsed_args.delete:
            results = self._delete(parsed_args, findings, details, cloud)
        rows = [self._row(finding, details[finding.consumer], cloud, columns)
                + ((results[finding.consumer].text,) if results else ())
                for finding in findings]
        return columns + ((RESULT_COLUMN,) if results else ()), rows

    @staticmethod
    def _suspects(held, nova, trees, whole_cloud):
        """The consumers to read (again): those judged a problem, and
        over the whole cloud (where the providers' allocations carry no
        type) those that only a type could make Nova's."""
        return [uuid for uuid, read in held.items()
                if audit.judge(uuid, read, nova, trees)
                or (whole_cloud and not audit.is_novas(read, nova, trees))]

    def _confirmed(self, details, client, nova, trees, cloud):
        """The findings on the consumers' allocations as just read, each
        confirmed by what Nova says of its server now."""
        findings = [finding for finding in (
            audit.judge(uuid, detail, nova, trees)
            for uuid, detail in details.items()) if finding]
        details.update(cloud.details(
            {finding.to for finding in findings if finding.to}
            - set(details)))
        confirmed = common.run_concurrently(
            lambda finding: self._confirm(finding, details, client, nova,
                                          trees), findings)
        return [finding for finding in providers.results_or_raise(confirmed)
                if finding]

    @staticmethod
    def _confirm(finding, details, client, nova, trees):
        """The finding judged again on Nova's answer about its server
        now, or None when Nova accounts for the consumer after all."""
        migration = nova.migrations.get(finding.consumer)
        server_uuid = (migration['instance_uuid'] if migration
                       else finding.consumer)
        server = client.server(server_uuid)
        now = nova.narrowed([server] if server else [],
                            client.migrations(instance_uuid=server_uuid))
        again = audit.judge(finding.consumer, details[finding.consumer],
                            now, trees)
        if again is not None and again.to:
            again = audit.hand_back(again, details[again.to], trees, now)
        return again

    def _note_others(self, held, details, nova, trees):
        others = sum(1 for uuid, read in held.items()
                     if not audit.is_novas(details.get(uuid, read), nova,
                                           trees))
        if others:
            bulk.tell(self, '%d consumers are not Nova\'s (no Nova type, no '
                            'class Nova allocates in a tree of its compute '
                            'nodes): not judged.' % others)

    def _row(self, finding, detail, cloud, columns):
        allocations = detail['allocations']
        resources = {}
        for allocation in allocations.values():
            for rc, amount in allocation['resources'].items():
                resources[rc] = resources.get(rc, 0) + amount
        values = {
            'consumer_uuid': finding.consumer, 'problem': finding.problem,
            'detail': finding.detail,
            'providers': ','.join(sorted(cloud.name(uuid)
                                         for uuid in allocations)),
            'resources': common.amounts_text(dict(sorted(resources.items()))),
            'project_id': detail.get('project_id'),
            'user_id': detail.get('user_id'),
            'consumer_type': consumers.type_of(detail)}
        return tuple(values[column] for column in columns)

    def _delete(self, parsed_args, findings, details, cloud):
        fixable = [finding for finding in findings if finding.keep is not None]
        if fixable and not parsed_args.yes:
            bulk.tell(self, 'These consumers would lose allocations:\n%s'
                      % '\n'.join(self._loss_line(finding, details, cloud)
                                  for finding in fixable))
            common.confirm_removal(
                self, 'Remove them?',
                'the allocations of %d consumers' % len(fixable),
                'Give --yes to confirm.')
        outcomes = write_each(
            lambda finding: self._fix(finding, details), fixable)
        results = {finding.consumer: UNDECIDED for finding in findings}
        for finding, outcome in zip(fixable, outcomes):
            results[finding.consumer] = outcome or Outcome(
                DONE, self._removed_text(finding, details, cloud))
        self.exit_code = exit_status(results.values())
        if self.exit_code != FOUND_AND_DELETED:
            bulk.tell(self, 'Some consumers were left alone; see the '
                            'result column, and run the audit again.')
        return results

    @staticmethod
    def _lost(finding, details, cloud):
        return ', '.join(sorted(
            cloud.name(uuid)
            for uuid in details[finding.consumer]['allocations']
            if uuid not in finding.keep))

    def _loss_line(self, finding, details, cloud):
        line = '  %s (%s): %s' % (finding.consumer, finding.problem,
                                  self._lost(finding, details, cloud))
        if finding.to:
            line += (', handed to server %s in place of what it holds'
                     % finding.to)
        return line

    def _removed_text(self, finding, details, cloud):
        if finding.to:
            return 'deleted; moved to server %s' % finding.to
        if not finding.keep:
            return 'deleted'
        return 'deleted on %s' % self._lost(finding, details, cloud)

    def _fix(self, finding, details):
        detail = details[finding.consumer]
        if finding.to:
            return self._hand_back(finding, detail, details[finding.to])
        body = {'allocations': audit.fixed_allocations(detail, finding),
                'consumer_generation': detail['consumer_generation'],
                'project_id': detail['project_id'],
                'user_id': detail['user_id']}
        self.placement.request('PUT', CONSUMER_URL.format(
            uuid=finding.consumer), json=body, version=WRITE_VERSION)

    def _hand_back(self, finding, detail, server_detail):
        """One POST /allocations: the migration's allocations become the
        server's, in place of what the server held; both generations
        are checked, so nothing is written if either changed."""
        moved = audit.fixed_allocations(detail, finding._replace(
            keep=frozenset(detail['allocations'])))
        body = {
            finding.consumer: {
                'allocations': {},
                'consumer_generation': detail['consumer_generation'],
                'project_id': detail['project_id'],
                'user_id': detail['user_id']},
            finding.to: {
                'allocations': moved,
                'consumer_generation': server_detail.get(
                    'consumer_generation'),
                'project_id': server_detail.get('project_id',
                                                detail['project_id']),
                'user_id': server_detail.get('user_id', detail['user_id'])},
        }
        self.placement.request('POST', '/allocations', json=body,
                               version=WRITE_VERSION)


STALE_COLUMNS = ('uuid', 'name', 'problem', 'detail', 'root_provider_uuid',
                 'held_by')
STALE_DELETED = Outcome(DONE, 'deleted')
STALE_HELD = Outcome(LEFT, 'left alone: still holds allocations')
STALE_TREE_HELD = Outcome(LEFT, 'left alone: a provider of its tree holds '
                                'allocations')
STALE_UNPROVEN = Outcome(LEFT, 'left alone: not shown to be a compute '
                               'node\'s')


class ListStaleProvider(ExitStatus, common.PlacementCommand, lister.Lister):
    """List the providers of compute nodes Nova no longer has.

    A root provider is stale when its UUID is no compute node in Nova's
    compute API (admin only) and it looks like one: the name of a compute
    node of Nova's (the replaced or renamed node whose new provider
    Placement refuses, HTTP 409, the name being taken: the detail column
    names the node), a ``COMPUTE_`` trait, or compute classes (VCPU,
    PCPU, MEMORY_MB) alone. The children of a stale provider are listed
    after it (problem ``child-of-stale``), and Nova's compute nodes that
    share a name and have no provider (problem ``duplicate-name``: only
    deleting the old compute service in Nova fixes those).
    ``held_by`` lists the consumers that still hold allocations on each
    (see ``openstack resource provider consumer audit``).

    With --delete, the stale trees in which no provider holds
    allocations are deleted, children first, once confirmed (--yes, or
    "y" at a terminal), when their root has the name of one of Nova's
    nodes or a ``COMPUTE_`` trait; the others are left alone (compute
    classes alone do not prove a provider was Nova's) and their rows say
    why. Exit status: 0 nothing found, 3 found (and some left alone, with
    --delete), 4 found and all deleted, 1 an error. Needs
    ``--os-placement-api-version {provider_required}`` or later and
    Nova's compute API at microversion 2.69 or later.
    """

    required_feature = 'provider_required'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_delete_options(parser, 'the stale trees that hold no '
                                   'allocations')
        return parser

    def take_action(self, parsed_args):
        check_delete_options(parsed_args)
        cloud = CloudRead(self)
        nova = read_nova(nova_client(self), servers=False)
        stale = self._stale_roots(cloud, nova)
        children = audit.stale_children([item.provider for item in stale],
                                        cloud.every)
        listed = stale + [audit.StaleProvider(
            child, audit.STALE_CHILD, 'in the tree of a stale provider',
            False) for child in children]
        listed += audit.nodes_without_provider(cloud.every, nova)
        if not listed:
            bulk.tell(self, 'Every compute node provider in Placement is '
                            'one of Nova\'s compute nodes (%d known to '
                            'Nova).' % len(nova.hypervisors))
            return STALE_COLUMNS, []
        holders = self._holders([item.provider for item in listed
                                 if item.problem != audit.DUPLICATE_NAME])
        self.exit_code = FOUND
        results = {}
        if parsed_args.delete:
            results = self._delete(parsed_args, listed, holders)
            self.exit_code = exit_status(results.values())
        columns = STALE_COLUMNS + ((RESULT_COLUMN,) if results else ())
        return columns, [
            self._row(item, holders, results) for item in listed]

    def _stale_roots(self, cloud, nova):
        candidates = audit.unknown_roots(cloud.every, nova, cloud.sharing)
        read = providers.read_parts(
            self.get_json, [provider['uuid'] for provider in candidates],
            parts=('inventories', 'traits'), skip_missing=True)
        verdicts = (audit.stale_verdict(
            provider, read[provider['uuid']]['inventories'],
            read[provider['uuid']]['traits'], nova)
            for provider in candidates if provider['uuid'] in read)
        return [verdict for verdict in verdicts if verdict]

    def _holders(self, listed):
        read = providers.read_parts(
            self.get_json, [provider['uuid'] for provider in listed],
            parts=(providers.ALLOCATIONS_PART,), skip_missing=True)
        return {uuid: sorted(parts[providers.ALLOCATIONS_PART])
                for uuid, parts in read.items()}

    @staticmethod
    def _row(item, holders, results):
        provider = item.provider
        row = (provider['uuid'], provider['name'], item.problem, item.detail,
               provider.get('root_provider_uuid'),
               ','.join(holders.get(provider['uuid'], ())))
        return row + ((results[provider['uuid']].text,) if results else ())

    def _delete(self, parsed_args, listed, holders):
        results, doomed = self._plan(listed, holders)
        if doomed and not parsed_args.yes:
            bulk.tell(self, 'These providers would be deleted:\n%s'
                      % '\n'.join('  %s (%s)' % (provider['name'],
                                                 provider['uuid'])
                                  for provider in doomed))
            common.confirm_removal(self, 'Delete them?',
                                   '%d resource providers' % len(doomed),
                                   'Give --yes to confirm.')
        # Placement refuses to delete a provider that has children: the
        # children go first, deepest first as listed, then the roots.
        for provider in sorted(doomed, key=lambda provider: provider[
                'uuid'] == provider.get('root_provider_uuid')):
            results[provider['uuid']] = self._delete_one(provider)
        return results

    @staticmethod
    def _plan(listed, holders):
        """What --delete does with each row: the providers to delete, and
        why each other row is left alone."""
        by_root = {}
        for item in listed:
            by_root.setdefault(item.provider.get('root_provider_uuid'),
                               []).append(item)
        results, doomed = {}, []
        for item in listed:
            uuid = item.provider['uuid']
            tree = by_root.get(item.provider.get('root_provider_uuid'), [])
            root = next((member for member in tree
                         if member.problem == audit.STALE), None)
            if holders.get(uuid):
                results[uuid] = STALE_HELD
            elif any(holders.get(member.provider['uuid'])
                     for member in tree):
                results[uuid] = STALE_TREE_HELD
            elif root is None or not root.deletable:
                results[uuid] = STALE_UNPROVEN
            else:
                doomed.append(item.provider)
        return results, doomed

    def _delete_one(self, provider):
        """Delete one provider; what became of it. Placement refuses a
        provider that got allocations or children meanwhile (409): it
        is left alone, and so is its root after it."""
        try:
            common.retry_server_errors(
                self.placement.request, 'DELETE',
                '/resource_providers/%s' % provider['uuid'],
                attempts=providers.MAX_ATTEMPTS)
        except exceptions.NotFound:
            return STALE_DELETED  # gone meanwhile: what was wanted
        except exceptions.Conflict as exc:
            return Outcome(LEFT, 'left alone: %s' % exc)
        except Exception as exc:  # reported in its row, the rest go on
            return Outcome(FAILED, 'failed: %s' % exc)
        return STALE_DELETED


TYPE_COLUMNS = ('consumer_uuid', 'consumer_type', 'new_consumer_type',
                'result')
TYPE_SET = 'set'
TYPE_PLANNED = 'to be set'


class SyncConsumerType(ExitStatus, common.PlacementCommand, lister.Lister):
    """Give Nova's consumers the type Nova does not set.

    Nova writes allocations at a Placement version without consumer
    types, so every consumer it makes is ``unknown`` and usages by
    consumer type (``openstack resource usage show``) cannot tell a
    server from a migration. This reads the consumers of the cloud (or of
    --resource-provider's tree or --aggregate's trees), and sets INSTANCE
    on those that are live servers in Nova's compute API and MIGRATION on
    those that are migrations. Each consumer is written once, with its
    allocations, project and user as read and its consumer generation, so
    nothing else about it changes and a consumer changed meanwhile is
    left alone (its row says so). Consumers Nova does not know are not
    touched: see ``openstack resource provider consumer audit``.

    --dry-run shows the changes and writes nothing. The exit status is 1
    when a consumer could not be written (changed meanwhile, or an
    error), 0 otherwise. Needs ``--os-placement-api-version
    {consumer_types}`` or later and Nova's compute API at microversion
    2.69 or later.
    """

    required_feature = 'consumer_types'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_scope_options(parser)
        parser.add_argument(
            '--dry-run', action='store_true',
            help='Show the types that would be set; change nothing')
        return parser

    def take_action(self, parsed_args):
        cloud = CloudRead(self)
        listed, where = cloud.scope(parsed_args)
        nova = read_nova(nova_client(self), hypervisors=False)
        details = cloud.details(uuid for uuid in cloud.consumers_of(listed)
                                if audit.nova_type(uuid, nova))
        changes = [(uuid, audit.nova_type(uuid, nova))
                   for uuid, detail in sorted(details.items())
                   if consumers.type_of(detail) == consumers.UNTYPED
                   and detail.get('allocations')
                   and audit.nova_type(uuid, nova)]
        if not changes:
            bulk.tell(self, 'No untyped consumer in %s is a server or a '
                            'migration of Nova\'s.' % where)
            return TYPE_COLUMNS, []
        if parsed_args.dry_run:
            results = {uuid: TYPE_PLANNED for uuid, _ in changes}
        else:
            results = self._write(changes, details)
        return TYPE_COLUMNS, [
            (uuid, consumers.UNTYPED, new_type, results[uuid])
            for uuid, new_type in changes]

    def _write(self, changes, details):
        outcomes = write_each(
            lambda change: self._set_type(details[change[0]], *change),
            changes)
        if any(outcomes):
            self.exit_code = FAILURE
        return {uuid: outcome.text if outcome else TYPE_SET
                for (uuid, _), outcome in zip(changes, outcomes)}

    def _set_type(self, detail, uuid, new_type):
        kept = {provider: {'resources': dict(allocation['resources'])}
                for provider, allocation in detail['allocations'].items()}
        body = {'allocations': kept,
                'consumer_generation': detail['consumer_generation'],
                'consumer_type': new_type,
                'project_id': detail['project_id'],
                'user_id': detail['user_id']}
        self.placement.request('PUT', CONSUMER_URL.format(uuid=uuid),
                               json=body, version=TYPED_WRITE_VERSION)
