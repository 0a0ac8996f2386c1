# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider consumer list``: who holds a provider, an
aggregate or the whole cloud.

What an operator asks before deleting a host (Placement refuses to delete
a provider that has allocations), when an interrupted migration left
allocations behind somewhere in the cloud, or when a consumer holds
resources on two compute hosts at once.
"""

import difflib
import re

from cliff import lister
from osc_lib import exceptions

from osc_placement import audit
from osc_placement import provider_rules
from osc_placement.resources import common
from osc_placement.resources import provider_tree
from osc_placement.resources import providers
from osc_placement import version

PROVIDERS_URL = '/resource_providers'
PROVIDER_ALLOCATIONS_URL = '/resource_providers/{uuid}/allocations'
CONSUMER_URL = '/allocations/{uuid}'
USAGES_URL = '/usages'

# The columns and the feature from which each can be filled. The
# consumer's own fields come from GET /allocations/{consumer}; providers
# is shown with --tree only (which needs nested providers).
COLUMNS = (
    ('consumer_uuid', 'base'),
    ('resources', 'base'),
    ('providers', 'nested_providers'),
    ('project_id', 'consumer_details'),
    ('user_id', 'consumer_details'),
    ('consumer_generation', 'consumer_generations'),
    ('consumer_type', 'consumer_types'),
)
TREE_ONLY_COLUMNS = ('providers',)
# Without a provider (the whole cloud or an aggregate): where each
# consumer holds, and in how many compute trees (roots need nested
# providers, the sharing providers the required filter of provider lists).
CLOUD_COLUMNS = (
    ('consumer_uuid', 'base'),
    ('resources', 'base'),
    ('providers', 'base'),
    ('trees', 'provider_required'),
    ('project_id', 'consumer_details'),
    ('user_id', 'consumer_details'),
    ('consumer_generation', 'consumer_generations'),
    ('consumer_type', 'consumer_types'),
)
# The columns filled from GET /allocations/{consumer}.
DETAIL_COLUMNS = ('project_id', 'user_id', 'consumer_generation',
                  'consumer_type')

LIST_GATES = (
    ('tree', bool, 'nested_providers'),
    ('consumer_type', bool, 'consumer_types'),
    ('project', bool, 'consumer_details'),
    ('user', bool, 'consumer_details'),
    ('aggregate', bool, 'nested_providers'),
    ('doubled', bool, 'provider_required'),
)

# Placement's consumer types: upper case letters, digits and underscores,
# at most 255 characters. "unknown" is Placement's name for a consumer
# written without a type.
CONSUMER_TYPE_RE = re.compile(r'^[A-Z0-9_]{1,255}$')
UNTYPED = 'unknown'
# The types Nova writes; any other is looked for among the consumers read.
NOVA_TYPES = audit.NOVA_CONSUMER_TYPES


def consumer_columns(ver, tree):
    return tuple(name for name, feature in COLUMNS
                 if version.supports(ver, feature)
                 and (tree or name not in TREE_ONLY_COLUMNS))


def holdings(allocations_by_provider):
    """Each consumer's resources summed over the providers, and which.

    ``allocations_by_provider`` is ``[(provider name, the allocations
    member of GET /resource_providers/{uuid}/allocations)]``. The answer
    is ``{consumer: {'resources': {class: amount}, 'providers': [name]}}``
    with classes and names sorted.
    """
    held = {}
    for name, allocations in allocations_by_provider:
        for consumer, allocation in allocations.items():
            entry = held.setdefault(consumer,
                                    {'resources': {}, 'providers': []})
            entry['providers'].append(name)
            for rc, amount in allocation['resources'].items():
                entry['resources'][rc] = entry['resources'].get(rc, 0) + amount
    for entry in held.values():
        entry['resources'] = dict(sorted(entry['resources'].items()))
        entry['providers'].sort()
    return held


def consumer_row(consumer, entry, detail, columns):
    """One row of ``columns``; ``detail`` is GET /allocations/{consumer}."""
    values = dict(detail or {}, consumer_uuid=consumer,
                  resources=common.amounts_text(entry['resources']),
                  providers=','.join(entry['providers']),
                  trees=entry.get('trees'))
    return tuple(values.get(column) for column in columns)


def type_of(detail):
    """A consumer's type as Placement shows it, ``unknown`` for none."""
    return detail.get('consumer_type') or UNTYPED


# --- Which consumers are asked for.

def normalized_consumer_type(value):
    """The consumer type ``--consumer-type`` names, in Placement's case.

    ``unknown`` (any case) selects consumers written without a type; any
    other value is upper-cased and must be a name Placement could hold.
    """
    if value is None:
        return None
    if value.lower() == UNTYPED:
        return UNTYPED
    name = value.upper()
    if not CONSUMER_TYPE_RE.match(name):
        raise exceptions.CommandError(
            "Invalid consumer type '%s': a consumer type is 1 to 255 "
            "letters, digits and underscores (for example MIGRATION), or "
            "'unknown' for consumers written without a type." % value)
    return name


def type_guess_note(consumer_type):
    """What to say before reading every consumer for a type Nova does not
    write (a misspelt MIGRATION, say), or None."""
    if consumer_type in (None, UNTYPED) + NOVA_TYPES:
        return None
    note = ("Consumer type '%s' is not one Nova writes (%s); looking "
            "for it among the consumers." % (consumer_type,
                                             ', '.join(NOVA_TYPES)))
    close = difflib.get_close_matches(consumer_type, NOVA_TYPES, n=1)
    return note + (' Did you mean %s?' % close[0] if close else '')


def types_held(details):
    """The types of the consumers read that still hold allocations."""
    return {type_of(detail) for detail in details
            if detail and detail.get('allocations')}


def check_type_is_held(consumer_type, held, where):
    """Refuse a type no consumer has (``held``: the types there), unless
    Nova writes it: a name nobody holds is most likely a mistake, and an
    empty list would hide it."""
    if consumer_type in (None, UNTYPED) + NOVA_TYPES:
        return
    held = sorted(held)
    if consumer_type not in held:
        raise exceptions.CommandError(
            "Unknown consumer type '%s': no consumer in %s has it (the "
            "types held there: %s)."
            % (consumer_type, where, ', '.join(held) or 'none'))


def matches(detail, wanted):
    """True when a consumer's details pass the type, project and user
    filters; a consumer whose allocations are gone (deleted meanwhile)
    never does. ``None`` (details not read) passes: they are read
    whenever a filter is given."""
    if detail is None:
        return True
    if not detail.get('allocations'):
        return False
    shown = dict(detail, consumer_type=type_of(detail))
    return all(value is None or shown.get(key) == value
               for key, value in wanted.items())


def detail_filters(parsed_args, consumer_type):
    """The details each listed consumer must have, by member of
    GET /allocations/{consumer}."""
    filters = {'project_id': parsed_args.project,
               'user_id': parsed_args.user}
    return dict(filters, consumer_type=consumer_type)


def no_match_note(parsed_args, consumer_type, where):
    asked = [('consumer type', consumer_type),
             ('project', parsed_args.project), ('user', parsed_args.user)]
    said = ['%s %s' % (name, value) for name, value in asked if value]
    if getattr(parsed_args, 'doubled', False):
        said.append('holding allocations in more than one compute tree')
    return 'No consumer in %s%s.' % (
        where, (' matches: ' + ', '.join(said)) if said else ' holds '
        'allocations')


# --- Compute trees: one per root provider, sharing providers aside.

def compute_trees(provider_uuids, root_of, sharing):
    """Roots of a consumer's providers, sharing ones left out: a disk shared
    by an aggregate is not a second host."""
    return {root_of.get(uuid, uuid) for uuid in provider_uuids
            if uuid not in sharing}


def consumers_by_provider(read):
    """``{consumer: [provider uuid]}`` of ``{provider uuid: allocations}``."""
    where = {}
    for provider, allocations in read.items():
        for consumer in allocations:
            where.setdefault(consumer, []).append(provider)
    return where


def in_trees_of(listed, members):
    """The providers of ``listed`` in the trees of ``members``."""
    roots = {providers.root_of(provider) for provider in members}
    return [provider for provider in listed
            if providers.root_of(provider) in roots]


class ListConsumer(common.PlacementCommand, lister.Lister):
    """List the consumers holding allocations on providers.

    With a provider (UUID or name): one row per consumer, sorted by
    consumer UUID, with the resources it holds on the provider; with
    ``--tree``, on every provider of the provider's tree, summed per class
    over the tree, and the ``providers`` column names the providers they
    are on.

    Without a provider: the consumers of the whole cloud, or with
    --aggregate those holding allocations on the trees of the aggregate's
    providers. The resources and providers columns are what each holds
    there; trees ({provider_required}) counts the compute trees (root
    providers) it holds allocations in anywhere, a sharing provider
    (MISC_SHARES_VIA_AGGREGATE) not counting as one, and --doubled keeps
    those holding more than one. Every provider's allocations are read,
    one request each, sent concurrently (and over the whole cloud,
    --doubled reads only the doubled consumers one by one).

    The consumer's ``project_id`` and ``user_id`` are shown from
    ``--os-placement-api-version {consumer_details}``,
    ``consumer_generation`` from {consumer_generations} and
    ``consumer_type`` from {consumer_types}; they cost one request per
    consumer, sent concurrently, and are read only when a column shown or
    a filter needs them. When no consumer matches, the list is empty, a
    note on stderr says so, and the exit status is 0; a consumer type
    that is not a valid name, or that Nova does not write and no consumer
    listed has, is an error (exit status 1).

    A provider that has allocations cannot be deleted (HTTP 409): this
    lists who holds them, to be removed with ``openstack resource provider
    allocation delete <consumer>`` once the workload is gone or moved.

    Examples::

        # What interrupted migrations left anywhere in the cloud:
        openstack resource provider consumer list --consumer-type migration
        # Consumers holding two compute trees in one aggregate:
        openstack resource provider consumer list --doubled \\
            --aggregate <aggregate_uuid>
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'provider', metavar='<provider>', nargs='?',
            help='UUID or name of the resource provider; without it, the '
                 'whole cloud (or the aggregate of --aggregate)')
        parser.add_argument(
            '--tree', action='store_true',
            help=version.render(
                'Consumers holding allocations on any provider of the '
                'provider\'s tree. This option requires at least '
                '``--os-placement-api-version {nested_providers}``.'))
        parser.add_argument(
            '--aggregate', metavar='<aggregate_uuid>',
            help=version.render(
                'Without a provider: only consumers holding allocations on '
                'a provider of this aggregate or of the tree of one (NUMA '
                'nodes and GPUs are rarely members themselves). This '
                'option requires at least '
                '``--os-placement-api-version {nested_providers}``.'))
        parser.add_argument(
            '--consumer-type', metavar='<consumer_type>',
            help=version.render(
                'Only consumers of this type, in any case, for example '
                'MIGRATION to find allocations an interrupted migration '
                'left behind; "unknown" selects consumers written without '
                'a type. A type Nova does not write (INSTANCE, MIGRATION) '
                'that no consumer listed has is an error. This option '
                'requires at least '
                '``--os-placement-api-version {consumer_types}``.'))
        parser.add_argument(
            '--project', metavar='<project_uuid>',
            help=version.render(
                'Only consumers of this project. This option requires at '
                'least ``--os-placement-api-version {consumer_details}``.'))
        parser.add_argument(
            '--user', metavar='<user_uuid>',
            help=version.render(
                'Only consumers of this user. This option requires at '
                'least ``--os-placement-api-version {consumer_details}``.'))
        parser.add_argument(
            '--doubled', action='store_true',
            help=version.render(
                'Without a provider: only consumers holding allocations in '
                'more than one compute tree (a sharing provider does not '
                'count as one). This option requires at least '
                '``--os-placement-api-version {provider_required}``.'))
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, LIST_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        consumer_type = normalized_consumer_type(parsed_args.consumer_type)
        self._check_scope_options(parsed_args)
        note = type_guess_note(consumer_type)
        if note:
            self._say(note)
        if parsed_args.provider:
            columns, rows, where = self._provider_rows(
                parsed_args, consumer_type)
        else:
            columns, rows, where = self._cloud_rows(
                parsed_args, consumer_type)
        if not rows:
            self._say(no_match_note(parsed_args, consumer_type, where))
        return columns, rows

    def _check_scope_options(self, parsed_args):
        if parsed_args.provider:
            for option in ('aggregate', 'doubled'):
                if getattr(parsed_args, option):
                    raise exceptions.CommandError(
                        '--%s lists consumers without a provider; give '
                        'either a provider or --%s.' % (option, option))
        elif parsed_args.tree:
            raise exceptions.CommandError(
                '--tree needs a provider: the tree of which provider?')
        if parsed_args.aggregate and not common.is_uuid(
                parsed_args.aggregate):
            raise exceptions.CommandError(
                "Invalid aggregate '%s': --aggregate takes the UUID of an "
                "aggregate." % parsed_args.aggregate)

    def _say(self, text):
        self.app.stderr.write(text + '\n')

    def _needs_details(self, parsed_args, shown, ver):
        """Whether GET /allocations/{consumer} is worth sending for each:
        a column shown (or sorted on) or a filter needs it."""
        if not version.supports(ver, 'consumer_details'):
            return False
        wanted = set(parsed_args.columns or shown) | set(
            getattr(parsed_args, 'sort_columns', None) or ())
        return bool(wanted & set(DETAIL_COLUMNS)) or any(
            (parsed_args.consumer_type, parsed_args.project,
             parsed_args.user))

    # --- One provider (or its tree): upstream-era behaviour and columns.

    def _provider_rows(self, parsed_args, consumer_type):
        ver = version.get_version(self)
        provider = common.find_provider(self, parsed_args.provider)
        looked_at = (provider_tree.tree_providers(self, provider)
                     if parsed_args.tree else [provider])
        held = holdings(self._allocations(looked_at))
        consumers = sorted(held)
        columns = consumer_columns(ver, parsed_args.tree)
        details = (self._details(consumers)
                   if self._needs_details(parsed_args, columns, ver)
                   else [None] * len(consumers))
        where = ("the tree of '%s'" if parsed_args.tree else "'%s'") % (
            parsed_args.provider)
        check_type_is_held(consumer_type, types_held(details), where)
        wanted = detail_filters(parsed_args, consumer_type)
        return columns, [
            consumer_row(consumer, held[consumer], detail, columns)
            for consumer, detail in zip(consumers, details)
            if matches(detail, wanted)], where

    def _allocations(self, listed):
        results = providers.results_or_raise(common.run_concurrently(
            lambda provider: self.get_json(PROVIDER_ALLOCATIONS_URL.format(
                uuid=provider['uuid']))['allocations'],
            listed))
        return [(provider['name'], allocations)
                for provider, allocations in zip(listed, results)]

    def _details(self, consumers):
        """GET /allocations/{consumer} for each, concurrently; a server
        error is retried."""
        return providers.results_or_raise(common.run_concurrently(
            lambda consumer: providers.get_retrying(
                self.get_json, CONSUMER_URL.format(uuid=consumer)),
            consumers, progress=common.StderrProgress('consumers')))

    # --- The whole cloud, or the trees of an aggregate.

    def _cloud_rows(self, parsed_args, consumer_type):
        ver = version.get_version(self)
        columns = tuple(column for column, feature in CLOUD_COLUMNS
                        if version.supports(ver, feature))
        every = self.get_json(PROVIDERS_URL)['resource_providers']
        listed, where = every, 'the cloud'
        if parsed_args.aggregate:
            listed = self._aggregate_trees(every, parsed_args.aggregate)
            where = 'aggregate %s' % parsed_args.aggregate
        if self._project_lacks_type(parsed_args, consumer_type):
            return columns, [], where
        read = self._allocations_of_every(listed)
        held = holdings([(provider['name'], read[provider['uuid']])
                         for provider in listed if provider['uuid'] in read])
        consumers = sorted(held)
        counts_trees = 'trees' in columns and (
            parsed_args.doubled or 'trees' in (parsed_args.columns
                                               or columns))
        checked_in = where
        if counts_trees and not parsed_args.aggregate:
            # Over the whole cloud the providers read name every provider
            # a consumer holds: --doubled narrows before any consumer read.
            self._count_trees(held, every, consumers, [None] * len(consumers),
                              consumers_by_provider(read))
            if parsed_args.doubled:
                consumers = [consumer for consumer in consumers
                             if held[consumer]['trees'] > 1]
                checked_in = 'the consumers of %s in more than one tree' % (
                    where)
        # Outside the whole cloud only a consumer's own allocations name
        # every provider it holds.
        details = (self._details(consumers)
                   if (counts_trees and parsed_args.aggregate)
                   or self._needs_details(parsed_args, columns, ver)
                   else [None] * len(consumers))
        check_type_is_held(consumer_type, types_held(details), checked_in)
        if counts_trees and parsed_args.aggregate:
            self._count_trees(held, every, consumers, details, {})
        wanted = detail_filters(parsed_args, consumer_type)
        return columns, [
            consumer_row(consumer, held[consumer], detail, columns)
            for consumer, detail in zip(consumers, details)
            if matches(detail, wanted)
            and (not parsed_args.doubled or held[consumer]['trees'] > 1)
        ], where

    def _project_lacks_type(self, parsed_args, consumer_type):
        """With --project, one GET /usages (grouped by consumer type)
        says whether the project holds a consumer of the type at all,
        before any provider is read; a type Nova does not write that the
        project lacks is refused there."""
        if not (parsed_args.project and consumer_type):
            return False
        query = {'project_id': parsed_args.project}
        if parsed_args.user:
            query['user_id'] = parsed_args.user
        held = self.get_json(USAGES_URL, **query)['usages']
        if consumer_type in held:
            return False
        check_type_is_held(consumer_type, held,
                           'project %s' % parsed_args.project)
        return True

    def _aggregate_trees(self, every, aggregate):
        members = self.get_json(PROVIDERS_URL,
                                member_of=aggregate)['resource_providers']
        if not members:
            raise exceptions.CommandError(
                'No resource provider is in aggregate %s.' % aggregate)
        return in_trees_of(every, members)

    def _allocations_of_every(self, listed):
        """``{provider uuid: its allocations}``, read concurrently; a
        provider deleted meanwhile is left out."""
        read = providers.read_parts(
            self.get_json, [provider['uuid'] for provider in listed],
            parts=(providers.ALLOCATIONS_PART,),
            progress=common.StderrProgress('providers'), skip_missing=True)
        return {uuid: parts[providers.ALLOCATIONS_PART]
                for uuid, parts in read.items()}

    def _count_trees(self, held, every, consumers, details, where_held):
        """Set each consumer's ``trees`` in ``held``: from its own
        allocations where read (``details``), else from the providers read
        (``where_held``)."""
        root_of = {provider['uuid']: providers.root_of(provider)
                   for provider in every}
        sharing = {provider['uuid'] for provider in self.get_json(
            PROVIDERS_URL,
            required=provider_rules.SHARING_TRAIT)['resource_providers']}
        for consumer, detail in zip(consumers, details):
            held[consumer]['trees'] = len(compute_trees(
                detail['allocations'] if detail else where_held[consumer],
                root_of, sharing))
