# SPDX-License-Identifier: Apache-2.0
"""Commands for traits (``openstack trait ...``) and provider traits
(``openstack resource provider trait ...``).

``resource provider trait set/delete --aggregate`` write every provider of
an aggregate with the machinery ``inventory set --aggregate`` uses (see
``bulk``).
"""

import collections

from cliff import command
from cliff import lister
from cliff import show
from osc_lib import exceptions

from osc_placement.resources import bulk
from osc_placement.resources import common
from osc_placement import version

BASE_URL = '/traits'
RP_URL = '/resource_providers/{uuid}'
RP_TRAITS_URL = RP_URL + '/traits'
FIELDS = ('name',)
AGGREGATE_FIELDS = ('resource_provider',) + FIELDS
# Every trait command arrived with traits themselves (required_feature).
# Options that need more than the command does: (dest, applies, feature).
# Listing an aggregate's providers (member_of) arrived before traits, so
# this never fails on its own today; it is kept as the rule it is.
AGGREGATE_GATES = (
    ('aggregate', bool, 'member_of'),
)


def name_rows(names):
    return FIELDS, [(name,) for name in names]


def add_provider_argument(parser):
    parser.add_argument('uuid', metavar='<uuid>',
                        help=common.NAME_OR_UUID_HELP + '.')


class TraitCommand(common.NamedItemCommand):
    collection = BASE_URL
    name_help = 'Name of the trait.'
    required_feature = 'traits'


class ListTrait(common.PlacementCommand, lister.Lister):
    """Return a list of valid trait strings.

    This command requires at least ``--os-placement-api-version {traits}``.
    """

    required_feature = 'traits'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--name', metavar='<name>',
            help='A string to filter traits, passed to the server as is. '
                 '``startswith:CUSTOM`` lists the traits whose name begins '
                 'with a prefix; ``in:HW_CPU_X86_AVX,HW_CPU_X86_SSE`` lists '
                 'those of the named traits that exist.')
        parser.add_argument(
            '--associated', action='store_true',
            help='List only the traits associated with at least one '
                 'resource provider.')
        return parser

    def take_action(self, parsed_args):
        body = self.get_json(BASE_URL, **list_query(parsed_args))
        return name_rows(body['traits'])


def list_query(parsed_args):
    query = {}
    if parsed_args.name:
        query['name'] = parsed_args.name
    if parsed_args.associated:
        # The server accepts any value; upstream sends True.
        query['associated'] = True
    return query


class ShowTrait(TraitCommand, show.ShowOne):
    """Check if a trait name exists in this cloud.

    An unknown trait fails with HTTP 404.

    This command requires at least ``--os-placement-api-version {traits}``.
    """

    def take_action(self, parsed_args):
        # The server answers 204 with no body; success is the answer.
        self.placement.request('GET', self.item_url(parsed_args.name))
        return FIELDS, (parsed_args.name,)


class CreateTrait(TraitCommand, command.Command):
    """Create a new custom trait.

    Custom trait names must start with ``CUSTOM_`` and contain only upper
    case letters, digits and underscores. Creating a trait that already
    exists succeeds.

    This command requires at least ``--os-placement-api-version {traits}``.
    """

    method = 'PUT'


class DeleteTrait(TraitCommand, command.Command):
    """Delete the trait specified by <name>.

    Only custom traits that no resource provider has can be deleted.

    This command requires at least ``--os-placement-api-version {traits}``.
    """

    method = 'DELETE'


class ListResourceProviderTrait(common.PlacementCommand, lister.Lister):
    """List traits associated with the resource provider <uuid>.

    This command requires at least ``--os-placement-api-version {traits}``.
    """

    required_feature = 'traits'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_provider_argument(parser)
        return parser

    def take_action(self, parsed_args):
        body = self.get_json(RP_TRAITS_URL.format(
            uuid=common.provider_uuid(self, parsed_args.uuid)))
        return name_rows(body['traits'])


# How a provider's new trait list is made from its current one and the
# names given. ``reads_current``: the new list depends on the current one,
# so every attempt reads it (and the generation with it) first.
TraitChange = collections.namedtuple('TraitChange', 'reads_current apply')
REPLACE = TraitChange(False, lambda current, given: list(given))
ADD = TraitChange(True, lambda current, given: current + [
    name for name in dict.fromkeys(given) if name not in current])
REMOVE = TraitChange(True, lambda current, given: [
    name for name in current if name not in given])
CLEAR = TraitChange(True, lambda current, given: [])


class ProviderTraitWriter(bulk.ProviderWriter):
    """Applies a ``TraitChange`` to one provider.

    Retries as ``bulk.ProviderWriter`` does; a change that reads the
    current traits redoes itself on what it read, so a trait another
    client set meanwhile is kept. A provider the change would leave as it
    is, is not written: its generation does not move, so running the same
    command again disturbs nobody.
    """

    def __init__(self, placement, change, given, action, dry_run=False):
        self.placement = placement
        self.change = change
        self.given = given
        self.action = action
        self.dry_run = dry_run

    def _attempt(self, uuid, generation):
        current = None
        if self.change.reads_current or generation is None:
            current = self._read(uuid)
            generation = current['resource_provider_generation']
        traits = self.change.apply(current['traits'] if current else [],
                                   self.given)
        if current is not None and set(traits) == set(current['traits']):
            # Nothing to change: a write would only move the generation
            # and make a concurrent writer (nova-compute) retry.
            return current
        payload = {'resource_provider_generation': generation,
                   'traits': traits}
        if self.dry_run:
            return payload
        return self._write(uuid, payload)

    def _read(self, uuid):
        return self.placement.request(
            'GET', RP_TRAITS_URL.format(uuid=uuid)).json()

    def _write(self, uuid, payload):
        return self.placement.request(
            'PUT', RP_TRAITS_URL.format(uuid=uuid), json=payload).json()


class TraitEdit(bulk.BulkEdit):
    """A ``TraitChange`` planned on every provider of an aggregate.

    A replace keeps the protected traits (``bulk.PROTECTED_TRAITS``) a
    provider has unless ``remove_protected`` names them; an addition or a
    removal of named traits does exactly what it names.
    """

    nouns = 'traits'

    def __init__(self, placement, change, given, action,
                 remove_protected=()):
        self.writer = ProviderTraitWriter(placement, change, given, action)
        self.change = change
        self.given = given
        self.action = action
        self.remove_protected = set(remove_protected)

    def read(self, uuid):
        body = self.writer._read(uuid)
        return bulk.State(body['resource_provider_generation'],
                          body['traits'])

    def target(self, current):
        new = self.change.apply(current, self.given)
        if self.change is not REPLACE:
            return new, ()
        kept = [name for name in bulk.PROTECTED_TRAITS
                if name in current and name not in new
                and name not in self.remove_protected]
        return new + kept, kept

    def diff(self, current, new):
        return ([(bulk.ADDED, name) for name in new if name not in current]
                + [(bulk.REMOVED, name) for name in current
                   if name not in new])

    def write(self, uuid, generation, new):
        return self.writer._write(uuid, {
            'resource_provider_generation': generation,
            'traits': new})['traits']


def trait_plan_row(plan, sign, name):
    return (name,)


def edit_aggregate_traits(command, parsed_args, edit, progress_label):
    """Rows of a bulk trait edit: each change of a dry run, or the traits
    each provider has afterwards."""
    plans, outcomes = bulk.edit_aggregate(command, parsed_args, edit,
                                          progress_label)
    if outcomes is None and not bulk.upstream_bulk_edits():
        return (bulk.PLAN_COLUMNS + ('trait',),
                bulk.plan_rows(plans, trait_plan_row))
    # The traits each provider has afterwards (or, dry, would have).
    after = ([plan.new for plan in plans] if outcomes is None
             else [outcome.current for outcome in outcomes])
    return AGGREGATE_FIELDS, [
        (plan.uuid, name)
        for plan, traits in zip(plans, after) for name in traits]


def add_aggregate_arguments(parser, verb):
    """``--aggregate`` and ``--dry-run``, as ``inventory set`` has them."""
    parser.add_argument(
        '--aggregate', action='store_true',
        help=version.render(
            'The positional UUID is an aggregate: %s the traits of every '
            'resource provider in it, several at a time. Not atomic: a '
            'provider that fails is reported and the others are still '
            'written. This option requires at least '
            '``--os-placement-api-version {member_of}``.') % verb)
    parser.add_argument(
        '--dry-run', action='store_true',
        help='Change nothing. For one resource provider, show the traits '
             'it would have; with --aggregate, show each change: one row '
             'per trait added (+) or removed (-), with the resource '
             'provider\'s UUID and name.')
    bulk.add_bulk_safety_arguments(parser, 'traits')


def write_traits(writer, uuid):
    """Run ``writer`` on one provider; rows of the traits it has (or, dry,
    would have) after."""
    result = writer({'uuid': uuid, 'generation': None})
    return name_rows(result['traits'])


def check_traits_exist(command, names):
    """Fail, as the server would, when a name is not a trait."""
    if not names:
        return
    known = command.get_json(BASE_URL, name='in:' + ','.join(names))
    missing = [name for name in names if name not in known['traits']]
    if missing:
        raise exceptions.CommandError(
            'No such trait(s): %s.' % ', '.join(missing))


class SetResourceProviderTrait(common.PlacementCommand, lister.Lister):
    """Associate traits with the resource provider <uuid>.

    All the associated traits are replaced by the traits given; with no
    --trait the provider is left with none. The provider generation is
    read first and sent back, so a concurrent change to the provider fails
    with HTTP 409 instead of being overwritten.

    With --amend the traits given are added to the provider's own and
    none is removed; a provider that already has them all is not written.
    A write refused because the provider changed meanwhile is then read
    again and retried, since the addition is redone on the fresh traits.

    With --aggregate the positional UUID is an aggregate, and every
    provider in it is changed, several at a time, with these safeguards:

    - Sharing providers (trait MISC_SHARES_VIA_AGGREGATE, such as a shared
      disk) are left alone unless --include-sharing is given.
    - A replace (no --amend) keeps COMPUTE_STATUS_DISABLED and
      MISC_SHARES_VIA_AGGREGATE where a provider has them, and says so:
      a disabled host stays disabled. --remove-protected NAME lets it
      remove one of them.
    - Every provider is read first. A change that removes any trait is
      shown and needs confirmation: "y" at the prompt on a terminal, or
      --yes. Without either, nothing is changed and the command exits 1.
    - --dry-run shows each trait that would be added (+) or removed (-),
      by provider name and UUID, and changes nothing.

    This is not atomic: a provider that fails is reported, with the
    providers that were changed, and the command then fails with "Failed
    to set traits for N of M resource providers." Each provider is written
    with its generation, so a failed one is left as it was.

    This command requires at least --os-placement-api-version {traits}.

    Examples::

        # Tag every host of an aggregate, keeping their other traits:
        openstack resource provider trait set <aggregate> --aggregate \\
            --amend --trait CUSTOM_GOLD
        # See what a replace would add and remove, then do it:
        openstack resource provider trait set <aggregate> --aggregate \\
            --trait HW_CPU_X86_AVX2 --dry-run
        openstack resource provider trait set <aggregate> --aggregate \\
            --trait HW_CPU_X86_AVX2 --yes
    """

    required_feature = 'traits'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        bulk.add_provider_or_aggregate_argument(parser)
        parser.add_argument(
            '--trait', metavar='<trait>', default=[], action='append',
            help='Name of the trait. May be repeated.')
        parser.add_argument(
            '--amend', action='store_true',
            help='Add the traits given to those the resource provider has, '
                 'instead of replacing them.')
        add_aggregate_arguments(parser, 'set')
        parser.add_argument(
            '--remove-protected', metavar='<trait>', default=[],
            action='append', choices=bulk.PROTECTED_TRAITS,
            help='With --aggregate and without --amend, let the replace '
                 'remove this protected trait (%s), which it otherwise '
                 'keeps. May be repeated.'
                 % ' or '.join(bulk.PROTECTED_TRAITS))
        self._parser = parser
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, AGGREGATE_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        bulk.check_bulk_only_options(self._parser, parsed_args)
        check_remove_protected(self._parser, parsed_args)
        if parsed_args.aggregate:
            return self._set_aggregate(parsed_args)
        if not (parsed_args.amend or parsed_args.dry_run):
            return self._replace_once(parsed_args)
        writer = ProviderTraitWriter(
            self.placement, ADD if parsed_args.amend else REPLACE,
            parsed_args.trait, 'set traits', dry_run=parsed_args.dry_run)
        if parsed_args.dry_run:
            # The server is not asked, so it cannot refuse a misspelt name.
            check_traits_exist(self, parsed_args.trait)
        return write_traits(
            writer, common.provider_uuid(self, parsed_args.uuid))

    def _set_aggregate(self, parsed_args):
        if parsed_args.dry_run:
            check_traits_exist(self, parsed_args.trait)
        edit = TraitEdit(self.placement,
                         ADD if parsed_args.amend else REPLACE,
                         parsed_args.trait, 'set traits',
                         remove_protected=parsed_args.remove_protected)
        return edit_aggregate_traits(self, parsed_args, edit,
                                     'Setting traits')

    def _replace_once(self, parsed_args):
        # Upstream's: one attempt; a concurrent change fails with 409.
        uuid = common.provider_uuid(self, parsed_args.uuid)
        provider = self.get_json(RP_URL.format(uuid=uuid))
        payload = {'resource_provider_generation': provider['generation'],
                   'traits': parsed_args.trait}
        body = self.placement.request(
            'PUT', RP_TRAITS_URL.format(uuid=uuid), json=payload).json()
        return name_rows(body['traits'])


def check_remove_protected(parser, parsed_args):
    """--remove-protected only means something to a replace, and never
    together with keeping the same trait."""
    named = parsed_args.remove_protected
    if not named:
        return
    if parsed_args.amend:
        parser.error('--remove-protected does nothing with --amend, which '
                     'removes no trait.')
    both = sorted(set(named) & set(parsed_args.trait))
    if both:
        parser.error('%s is given both to keep (--trait) and to remove '
                     '(--remove-protected).' % ', '.join(both))


AGGREGATE_NEEDS_TRAIT = (
    '--aggregate needs --trait: removing every trait of every resource '
    'provider in an aggregate is not offered; name the traits to remove '
    '(to clear them all, "resource provider trait set <aggregate> '
    '--aggregate" with no --trait replaces them with none).')


class DeleteResourceProviderTrait(common.PlacementCommand, lister.Lister):
    """Dissociate traits (all, or those given) from the provider <uuid>.

    The server does this without a generation check, so a concurrent
    "resource provider trait set" may win or lose; use "trait set" with
    no --trait for a checked removal.

    With --trait only the traits given are removed and the others are
    kept; the removal is checked against the provider generation and
    retried on a concurrent change. A provider that has none of them is
    not written. An unknown trait name is refused before anything is
    changed. The traits left are listed.

    With --aggregate (which needs --trait) the positional UUID is an
    aggregate, and the traits are removed from every provider in it,
    several at a time. Sharing providers (trait MISC_SHARES_VIA_AGGREGATE)
    are left alone unless --include-sharing is given. Every provider is
    read first and the removals are shown; they need confirmation: "y" at
    the prompt on a terminal, or --yes; without either nothing is changed
    and the command exits 1. A protected trait (COMPUTE_STATUS_DISABLED,
    MISC_SHARES_VIA_AGGREGATE) is removed only because --trait names it.
    --dry-run shows each removal by provider name and UUID. This is not
    atomic: a provider that fails is reported, with the providers that
    were changed; the command then fails with "Failed to delete traits
    for N of M resource providers."

    This command requires at least --os-placement-api-version {traits}.

    Examples::

        # Put the hosts of an aggregate back into scheduling (a sharing
        # disk in the aggregate is left alone):
        openstack resource provider trait delete <aggregate> --aggregate \\
            --trait COMPUTE_STATUS_DISABLED --dry-run
        openstack resource provider trait delete <aggregate> --aggregate \\
            --trait COMPUTE_STATUS_DISABLED --yes
    """

    required_feature = 'traits'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        bulk.add_provider_or_aggregate_argument(parser)
        parser.add_argument(
            '--trait', metavar='<trait>', default=[], action='append',
            help='Name of a trait to remove, keeping the others. May be '
                 'repeated.')
        add_aggregate_arguments(parser, 'change')
        # Kept to report --aggregate without --trait as a usage error.
        self._parser = parser
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, AGGREGATE_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        bulk.check_bulk_only_options(self._parser, parsed_args)
        if parsed_args.aggregate and not parsed_args.trait:
            self._parser.error(AGGREGATE_NEEDS_TRAIT)
        if not (parsed_args.trait or parsed_args.dry_run):
            # Upstream's: everything goes, unchecked; nothing is printed.
            self.placement.request('DELETE', RP_TRAITS_URL.format(
                uuid=common.provider_uuid(self, parsed_args.uuid)))
            return (), ()
        # The server never sees the names removed (only the traits kept
        # are sent), so a misspelt one would otherwise remove nothing,
        # quietly.
        check_traits_exist(self, parsed_args.trait)
        if parsed_args.aggregate:
            edit = TraitEdit(self.placement, REMOVE, parsed_args.trait,
                             'delete traits')
            return edit_aggregate_traits(self, parsed_args, edit,
                                         'Deleting traits')
        writer = ProviderTraitWriter(
            self.placement, REMOVE if parsed_args.trait else CLEAR,
            parsed_args.trait, 'delete traits', dry_run=parsed_args.dry_run)
        return write_traits(
            writer, common.provider_uuid(self, parsed_args.uuid))

    def produce_output(self, parsed_args, column_names, data):
        # Upstream's delete of every trait prints nothing, not even the
        # empty line an empty table would be.
        if column_names:
            super().produce_output(parsed_args, column_names, data)
