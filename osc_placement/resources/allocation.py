# SPDX-License-Identifier: Apache-2.0
"""Commands for a consumer's allocations
(``openstack resource provider allocation ...``)."""

import logging

from cliff import command
from cliff import lister
from osc_lib import exceptions

from osc_placement.resources import common
from osc_placement import version

LOG = logging.getLogger(__name__)

BASE_URL = '/allocations'

# The columns of a consumer's allocations, one row per provider, and the
# feature from which GET /allocations/{consumer} returns each one.
ALLOCATION_COLUMNS = (
    ('resource_provider', 'base'),
    ('generation', 'base'),
    ('resources', 'base'),
    ('project_id', 'consumer_details'),
    ('user_id', 'consumer_details'),
    ('consumer_type', 'consumer_types'),
)
# Columns that describe the consumer rather than one provider's share.
CONSUMER_COLUMNS = ('project_id', 'user_id', 'consumer_type')

# Who the consumer is: the option, its dest, and the feature from which the
# server insists on it in PUT /allocations/{consumer}.
CONSUMER_OPTIONS = (
    ('--project-id', 'project_id', 'allocation_project_user'),
    ('--user-id', 'user_id', 'allocation_project_user'),
    ('--consumer-type', 'consumer_type', 'consumer_types'),
)
# What upstream prints when those options are given to a server that
# ignores them, and the feature that starts to honour them.
IGNORED_OPTION_WARNINGS = (
    (('project_id', 'user_id'), version.render(
        '--project-id and --user-id options do not affect allocation for '
        '--os-placement-api-version less than {allocation_project_user}'),
     'allocation_project_user'),
    (('consumer_type',), version.render(
        '--consumer-type option does not affect allocation for '
        '--os-placement-api-version less than {consumer_types}'),
     'consumer_types'),
)
# GET shows this for a consumer written without a type; it is not a valid
# type to write back (types are upper case), so it must not be echoed.
UNTYPED_CONSUMER = 'unknown'

ALLOCATION_FORMAT_ERROR = 'Incorrect allocation string format'


def consumer_url(consumer):
    return '%s/%s' % (BASE_URL, consumer)


def parse_allocations(allocation_strings, provider_uuid=None):
    """``--allocation`` strings as ``{provider: {resource class: amount}}``.

    ``provider_uuid`` turns each ``rp=`` value into the provider's UUID,
    once every string has parsed. Strings naming the same provider are
    merged; giving one class two different amounts on one provider is an
    error.
    """
    parsed = [_parse_allocation(text) for text in allocation_strings]
    allocations = {}
    for provider, resources in parsed:
        if provider_uuid is not None:
            provider = provider_uuid(provider)
        merged = allocations.setdefault(provider, {})
        for rc, amount in resources.items():
            if merged.get(rc, amount) != amount:
                raise exceptions.CommandError(
                    'Conflict detected for resource provider %s resource '
                    'class %s' % (provider, rc))
            merged[rc] = amount
    return allocations


def _parse_allocation(text):
    if '=' not in text or ',' not in text:
        raise exceptions.CommandError(ALLOCATION_FORMAT_ERROR)
    pairs = [_split_pair(piece) for piece in text.split(',')]
    fields = dict(pairs)
    if 'rp' not in fields:
        raise exceptions.CommandError(
            'Resource provider parameter is required for allocation string')
    provider = fields.pop('rp')
    return provider, {rc: _amount(rc, value) for rc, value in fields.items()}


def _split_pair(piece):
    parts = piece.split('=')
    if len(parts) != 2:
        raise exceptions.CommandError(
            '%s: %r is not of the form <key>=<value>'
            % (ALLOCATION_FORMAT_ERROR, piece))
    return parts[0], parts[1]


def _amount(rc, value):
    try:
        return int(value)
    except ValueError:
        raise exceptions.CommandError(
            '%s: the amount of %s must be an integer, not %r'
            % (ALLOCATION_FORMAT_ERROR, rc, value)) from None


def allocations_payload(allocations, ver):
    """The ``allocations`` member of a PUT, in the shape ``ver`` expects:
    a dict keyed by provider, or before that feature a list."""
    if version.supports(ver, 'dict_allocations'):
        return {rp: {'resources': resources}
                for rp, resources in allocations.items()}
    return [{'resource_provider': {'uuid': rp}, 'resources': resources}
            for rp, resources in allocations.items()]


def allocation_table(body, ver):
    """Columns and one row per provider for a GET /allocations/{c} body."""
    columns = tuple(column for column, feature in ALLOCATION_COLUMNS
                    if version.supports(ver, feature))
    consumer = {key: body.get(key) for key in CONSUMER_COLUMNS}
    rows = []
    for provider, share in body.get('allocations', {}).items():
        values = dict(consumer, resource_provider=provider, **share)
        rows.append(tuple(values.get(column) for column in columns))
    return columns, rows


def add_consumer_argument(parser, metavar='<uuid>'):
    parser.add_argument('uuid', metavar=metavar, help='UUID of the consumer')


class ConsumerTypeCompatible:
    """Negotiated versions stop before consumer types unless
    --consumer-type is given.

    Scripts written for upstream, which never negotiates that far, give no
    consumer type and expect the columns without it.
    """

    negotiation_ceiling = version.COMPATIBLE_NEGOTIATION_CEILING

    def uses_newer_features(self, parsed_args):
        return getattr(parsed_args, 'consumer_type', None) is not None


class SetAllocation(ConsumerTypeCompatible, common.PlacementCommand,
                    lister.Lister):
    """Replaces the set of resource allocation(s) for a given consumer.

    Note that this is a full replacement of the existing allocations. If you
    want to retain the existing allocations and add a new resource class
    allocation, you must specify all resource class allocations, old and
    new.

    From ``--os-placement-api-version {allocation_project_user}`` it is
    required to specify ``--project-id`` and ``--user-id`` to set
    allocations, and from {consumer_types} ``--consumer-type`` as well. When
    the version is negotiated (the default), whether project and user are
    required is decided by the version the server speaks; the consumer type
    is needed only when the version is given explicitly: a negotiated
    version stops at {consumer_types.before} unless
    ``--consumer-type`` is given, so scripts written for upstream
    osc-placement keep working.

    Starting with ``--os-placement-api-version {consumer_details}`` the
    output shows the ``project_id`` and ``user_id`` of the consumer, and
    starting with {consumer_types} its ``consumer_type``.

    Starting with ``--os-placement-api-version {consumer_generations}`` the
    consumer generation is read first and sent back, so a concurrent change
    to the consumer's allocations fails with HTTP 409 instead of being
    overwritten.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_consumer_argument(parser)
        parser.add_argument(
            '--allocation',
            metavar='<rp=resource-provider-id,'
                    'resource-class-name=amount-of-resource-used>',
            action='append', default=[],
            help='Create (or update) an allocation of a resource class; '
                 '``rp`` is the name or UUID of the resource provider. '
                 'Specify option multiple times to set multiple '
                 'allocations; strings for the same provider are merged.')
        self._add_consumer_options(parser)
        # Kept so that take_action can fail the way argparse does once a
        # negotiated version makes an option required.
        self._parser = parser
        return parser

    def _add_consumer_options(self, parser):
        # Only an explicit version decides "required" here: negotiating
        # would send a request while merely building the parser.
        requested = version.requested_version(self.app)
        helps = {
            'project_id': 'ID of the consuming project.',
            'user_id': 'ID of the consuming user.',
            'consumer_type': 'The type of the consumer, for example '
                             'INSTANCE or MIGRATION.',
        }
        for option, dest, feature in CONSUMER_OPTIONS:
            parser.add_argument(
                option, metavar=dest, dest=dest,
                required=bool(requested
                              and version.supports(requested, feature)),
                help='%s This option is required starting from '
                     '``--os-placement-api-version %s``.'
                     % (helps[dest], version.since(feature)))

    def take_action(self, parsed_args):
        ver = version.get_version(self)
        self._require_consumer_options(parsed_args, ver)
        allocations = parse_allocations(
            parsed_args.allocation, common.provider_uuid_lookup(self))
        if not allocations:
            raise exceptions.CommandError(
                'At least one resource allocation must be specified')
        warn_about_ignored_options(parsed_args, ver)
        url = consumer_url(parsed_args.uuid)
        payload = self._payload(url, allocations, parsed_args, ver)
        self.placement.request('PUT', url, json=payload)
        return allocation_table(self.get_json(url), ver)

    def _require_consumer_options(self, parsed_args, ver):
        missing = [option for option, dest, feature in CONSUMER_OPTIONS
                   if version.supports(ver, feature)
                   and getattr(parsed_args, dest) is None]
        if missing:
            self._parser.error('the following arguments are required: %s'
                               % ', '.join(missing))

    def _payload(self, url, allocations, parsed_args, ver):
        payload = {'allocations': allocations_payload(allocations, ver)}
        if version.supports(ver, 'consumer_generations'):
            # None for a consumer that has no allocations yet.
            current = self.get_json(url)
            payload['consumer_generation'] = current.get(
                'consumer_generation')
        for _option, dest, feature in CONSUMER_OPTIONS:
            if version.supports(ver, feature):
                payload[dest] = getattr(parsed_args, dest)
        return payload


def warn_about_ignored_options(parsed_args, ver):
    for dests, warning, feature in IGNORED_OPTION_WARNINGS:
        given = any(getattr(parsed_args, dest) for dest in dests)
        if given and not version.supports(ver, feature):
            LOG.warning(warning)


class UnsetAllocation(ConsumerTypeCompatible, common.PlacementCommand,
                      lister.Lister):
    """Removes one or more sets of provider allocations for a consumer.

    The consumer's allocations are read, the given providers and/or
    resource classes are removed, and the rest is written back with the
    consumer's project, user and ({consumer_types}+) type unchanged.
    Omitting both ``--provider`` and ``--resource-class`` removes all
    allocations of the consumer.

    With ``--os-placement-api-version {consumer_generations}`` or greater
    the consumer generation read is sent back, so a concurrent change fails
    with HTTP 409 instead of being overwritten; use it when you can.

    This command requires ``--os-placement-api-version {consumer_details}``
    or greater. Use ``openstack resource provider allocation set`` for older
    versions.
    """

    # It writes back the project and user that GET shows from here.
    required_feature = 'consumer_details'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_consumer_argument(parser, metavar='<consumer_uuid>')
        parser.add_argument(
            '--provider', metavar='provider_uuid', action='append',
            default=[],
            help='Name or UUID of a resource provider from which to remove '
                 'the consumer\'s allocations, for example the source compute '
                 'node after an evacuation. May be repeated. Omit it to '
                 'remove the allocations from every provider (of the '
                 'classes given with ``--resource-class``, if any).')
        parser.add_argument(
            '--resource-class', metavar='resource_class', action='append',
            default=[],
            help='Name of a resource class whose allocations to remove. '
                 'May be repeated. By default it is removed from every '
                 'provider; with ``--provider`` only from those.')
        parser.add_argument(
            '--consumer-type', metavar='consumer_type',
            help=version.render(
                'Change the type of the consumer while writing its '
                'remaining allocations. By default the type is kept, and a '
                'consumer without one stays without one. This option '
                'requires at least ``--os-placement-api-version '
                '{consumer_types}``.'))
        return parser

    def take_action(self, parsed_args):
        ver = version.get_version(self)
        if parsed_args.consumer_type:
            version.supports(ver, 'consumer_types', refuse=True)
        url = consumer_url(parsed_args.uuid)
        current = self.get_json(url)
        providers = [common.provider_uuid(self, provider)
                     for provider in parsed_args.provider]
        remaining = remove_allocations(
            current.get('allocations', {}), providers,
            parsed_args.resource_class)
        self._write_back(url, current, remaining, parsed_args, ver)
        return allocation_table(self.get_json(url), ver)

    def _write_back(self, url, current, remaining, parsed_args, ver):
        if not version.supports(ver, 'consumer_generations'):
            # Before them an empty allocation set cannot be PUT; deleting
            # the consumer's allocations is the same thing.
            if remaining:
                self.placement.request('PUT', url, json=dict(
                    current, allocations=remaining))
            else:
                self.placement.request('DELETE', url)
            return
        if not current.get('allocations'):
            # Nothing to remove; a PUT would only fail validation for the
            # project and user an unknown consumer does not have.
            raise exceptions.CommandError(
                "No allocations for consumer '%s'" % parsed_args.uuid)
        payload = dict(current, allocations=remaining)
        self.placement.request('PUT', url, json=payload,
                               **typed_payload(payload, parsed_args, ver))


def typed_payload(payload, parsed_args, ver):
    """Fix up ``consumer_type`` in ``payload``; return request overrides.

    A consumer written without a type reads back as ``unknown``, which the
    server refuses to take back once it has consumer types. Writing at the
    version before them, where the type is not part of the request, leaves
    it untyped as it was.
    """
    if not version.supports(ver, 'consumer_types'):
        return {}
    if parsed_args.consumer_type:
        payload['consumer_type'] = parsed_args.consumer_type
        return {}
    if payload.get('consumer_type', UNTYPED_CONSUMER) == UNTYPED_CONSUMER:
        payload.pop('consumer_type', None)
        return {'version': version.before('consumer_types')}
    return {}


def remove_allocations(allocations, providers, resource_classes):
    """What is left of ``allocations`` after the unset; input untouched.

    Classes are removed from the given providers (all of them when none
    is given) and a provider left with nothing is dropped. Without classes
    the given providers (or all) are dropped whole. Names that are not
    there are ignored: the result is what the user asked for anyway.
    """
    targets = set(providers) if providers else set(allocations)
    if not resource_classes:
        return {rp: share for rp, share in allocations.items()
                if rp not in targets}
    remaining = {}
    for rp, share in allocations.items():
        resources = dict(share['resources'])
        if rp in targets:
            for rc in resource_classes:
                resources.pop(rc, None)
        if resources:
            remaining[rp] = dict(share, resources=resources)
    return remaining


class ShowAllocation(ConsumerTypeCompatible, common.PlacementCommand,
                     lister.Lister):
    """Show resource allocations for a given consumer.

    Starting with ``--os-placement-api-version {consumer_details}`` the
    output shows the ``project_id`` and ``user_id`` of the consumer, and
    starting with {consumer_types} its ``consumer_type`` (``unknown`` for a
    consumer created without one). When the version is negotiated (the
    default) it stops at {consumer_types.before}, so the columns
    stay those scripts written for upstream osc-placement expect; ask for
    ``--os-placement-api-version {consumer_types}`` to see the consumer
    type.
    A consumer without allocations shows an empty list.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_consumer_argument(parser)
        return parser

    def take_action(self, parsed_args):
        body = self.get_json(consumer_url(parsed_args.uuid))
        return allocation_table(body, version.get_version(self))


class DeleteAllocation(common.PlacementCommand, command.Command):
    """Delete all resource allocations for a given consumer."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_consumer_argument(parser)
        return parser

    def take_action(self, parsed_args):
        self.placement.request('DELETE', consumer_url(parsed_args.uuid))
