# SPDX-License-Identifier: Apache-2.0
"""OpenStackClient plugin hooks for the Placement service.

Kept free of heavy imports: the ``openstack`` shell imports every plugin
on start-up, so anything imported here is paid by every command, placement
or not. The HTTP client is imported only when a placement command runs.
"""

import logging
import os

from osc_placement import library_seams
from osc_placement import version

LOG = logging.getLogger(__name__)

API_NAME = 'placement'
API_VERSION_OPTION = 'os_placement_api_version'
API_VERSIONS = {v: 'osc_placement.http.SessionClient'
                for v in version.SUPPORTED_VERSIONS}
SERVICE_TYPE = 'placement'


def check_api_version(check_version):
    """Validate ``--os-placement-api-version`` before any command runs.

    Returning True tells the shell not to apply its own check, which would
    only warn and then fail later with a longer message.
    """
    if not version.is_supported(check_version):
        from osc_lib import exceptions
        raise exceptions.CommandError(
            version.unsupported_message(check_version))
    return True


def make_client(instance):
    """Build the Placement client from the osc-lib client manager."""
    from osc_placement import http

    requested = library_seams.requested_api_versions(instance)[API_NAME]
    if not version.is_supported(requested):
        from osc_lib import exceptions
        raise exceptions.UnsupportedVersion(
            version.unsupported_message(requested))
    if requested not in version.NEGOTIATE_VERSIONS:
        requested = version.parse(requested)
    ks_filter = {'service_type': SERVICE_TYPE,
                 'region_name': instance.region_name,
                 'interface': instance.interface}
    LOG.debug('Instantiating placement client, requested version %s',
              requested)
    return http.SessionClient(session=instance.session, ks_filter=ks_filter,
                              api_version=requested)


def build_option_parser(parser):
    """Add ``--os-placement-api-version`` to the shell's parser."""
    default = os.environ.get('OS_PLACEMENT_API_VERSION',
                             version.NEGOTIATE_VERSIONS[0])
    parser.add_argument(
        '--os-placement-api-version',
        metavar='<placement-api-version>',
        default=default,
        help='Placement API version, default=%s '
             '(Env: OS_PLACEMENT_API_VERSION); 1 negotiates the highest '
             'version the server and client share (at most %s)'
             % (version.NEGOTIATE_VERSIONS[0], version.MAX_VERSION))
    return parser
