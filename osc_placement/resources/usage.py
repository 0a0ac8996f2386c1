# SPDX-License-Identifier: Apache-2.0
"""Commands for usages (``resource provider usage show``, ``resource usage
show``)."""

import logging

from cliff import lister

from osc_placement.resources import common
from osc_placement import version

LOG = logging.getLogger(__name__)

PROVIDER_USAGES_URL = '/resource_providers/{uuid}/usages'
USAGES_URL = '/usages'
CLASS_COLUMNS = ('resource_class', 'usage')

# With consumer types the server groups project usages by consumer type,
# with a consumer count per type. Rows are then one per (type, class).
CONSUMER_TYPE_COLUMNS = ('consumer_type', 'resource_class', 'usage',
                         'consumer_count')
COUNT_KEY = 'consumer_count'
PROJECT_GATES = (
    ('consumer_type', bool, 'consumer_types'),
)


def class_rows(usages):
    return [(resource_class, usage)
            for resource_class, usage in usages.items()]


def consumer_type_rows(usages_by_type):
    """``{type: {RC: n, consumer_count: c}}`` -> (type, RC, n, c) rows."""
    rows = []
    for consumer_type, usages in usages_by_type.items():
        count = usages.get(COUNT_KEY, 0)
        rows += [(consumer_type, resource_class, usage, count)
                 for resource_class, usage in usages.items()
                 if resource_class != COUNT_KEY]
    return rows


# The output of ``resource usage show`` by version: (columns, rows, the
# feature that brought them); the newest the version has is used.
PROJECT_LAYOUTS = (
    (CLASS_COLUMNS, class_rows, 'project_usages'),
    (CONSUMER_TYPE_COLUMNS, consumer_type_rows, 'consumer_types'),
)


def no_usages_note(project_id, user_id=None, consumer_type=None):
    """What ``resource usage show`` says on stderr when nothing is used.

    Placement knows a project only by its allocations, so a misspelt
    project ID and a project using nothing look the same; the table stays
    empty and the exit code 0, as upstream's, but not silently.
    """
    whose = 'project %s' % project_id
    if user_id:
        whose += ', user %s' % user_id
    if consumer_type:
        whose += ', consumer type %s' % consumer_type
    return ('No usages recorded for %s: it has no allocations, or the ID '
            'is not one Placement knows.' % whose)


class ShowUsage(common.PlacementCommand, lister.Lister):
    """Show resource usages per class for a given resource provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<uuid>',
                            help=common.NAME_OR_UUID_HELP)
        return parser

    def take_action(self, parsed_args):
        uuid = common.provider_uuid(self, parsed_args.uuid)
        usages = self.get_json(
            PROVIDER_USAGES_URL.format(uuid=uuid))['usages']
        return CLASS_COLUMNS, class_rows(usages)


class ResourceShowUsage(common.PlacementCommand, lister.Lister):
    """Show resource usages for a project (and optionally user) per class.

    Gives a report of usage information for resources associated with the
    project identified by the ``project_id`` argument and user identified
    by the ``--user-id`` option. Placement knows a project only by its
    allocations: when nothing is used the table is empty and a note on
    stderr says so (a misspelt ID looks the same); the exit code is 0.

    From ``--os-placement-api-version {consumer_types}`` usages are
    reported per consumer type, with the columns ``consumer_type,
    resource_class, usage, consumer_count``: one row per consumer type and
    resource class, where ``consumer_count`` is the number of consumers of
    that type. Consumers created without a type are reported as
    ``unknown``. When the version is negotiated (the default) it stops at
    {consumer_types.before} unless ``--consumer-type`` is given, so the
    output keeps upstream's two columns for scripts written for upstream
    osc-placement.

    This command requires at least
    ``--os-placement-api-version {project_usages}``.
    """

    required_feature = 'project_usages'
    # A negotiated version keeps upstream's two columns unless the consumer
    # type is asked for (see version.COMPATIBLE_NEGOTIATION_CEILING).
    negotiation_ceiling = version.COMPATIBLE_NEGOTIATION_CEILING

    def uses_newer_features(self, parsed_args):
        return parsed_args.consumer_type is not None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project_id', metavar='<project-uuid>',
                            help='ID of the project.')
        parser.add_argument('--user-id', metavar='<user-uuid>',
                            help='ID of the user.')
        parser.add_argument(
            '--consumer-type', metavar='<consumer_type>',
            help=version.render(
                'Only usages of consumers of this type, for example '
                'INSTANCE; "all" sums every type into one row group, '
                '"unknown" selects consumers without a type. This option '
                'requires at least '
                '``--os-placement-api-version {consumer_types}``.'))
        return parser

    def take_action(self, parsed_args):
        for feature in common.needed_features(parsed_args, PROJECT_GATES):
            version.supports(version.get_version(self), feature, refuse=True)
        query = {'project_id': parsed_args.project_id,
                 'user_id': parsed_args.user_id,
                 'consumer_type': parsed_args.consumer_type}
        usages = self.get_json(
            USAGES_URL,
            **{key: value for key, value in query.items() if value})
        if not usages['usages']:
            LOG.warning(no_usages_note(parsed_args.project_id,
                                       parsed_args.user_id,
                                       parsed_args.consumer_type))
        columns, to_rows = self._layout()
        return columns, to_rows(usages['usages'])

    def _layout(self):
        ver = version.get_version(self)
        return [(columns, to_rows)
                for columns, to_rows, feature in PROJECT_LAYOUTS
                if version.supports(ver, feature)][-1]
