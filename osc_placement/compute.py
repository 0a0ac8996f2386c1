# SPDX-License-Identifier: Apache-2.0
"""What the placement commands read of Nova's public API.

The audit commands judge Placement's consumers and providers against
Nova: its servers, migrations, hypervisors and flavors. They reach Nova
with the session the command already holds, at the compute endpoint of
that session's catalogue (or ``compute_endpoint_override`` /
``OS_COMPUTE_ENDPOINT_OVERRIDE`` where there is no catalogue), and ask
for one microversion, ``MICROVERSION``: hypervisor ids that are the
compute nodes' UUIDs (2.53), migration UUIDs and paging (2.59), flavors
with their extra specs (2.61) and servers of an unreachable cell listed
as UNKNOWN rather than left out (2.69). Every failure becomes an osc-lib
``CommandError`` whose text names Nova, not to be taken for Placement's.
"""

from keystoneauth1 import exceptions as ks_exc
from osc_lib import exceptions as osc_exc

from osc_placement import http

SERVICE_TYPE = 'compute'
MICROVERSION = '2.69'
ENDPOINT_OVERRIDE_KEY = 'compute_endpoint_override'
ENDPOINT_OVERRIDE_ENV = 'OS_COMPUTE_ENDPOINT_OVERRIDE'
# Nova's api.max_limit default: a page of any list is at most this long.
PAGE_SIZE = 1000


class ComputeClient:
    """GETs to Nova at ``MICROVERSION`` over a keystoneauth1 session."""

    def __init__(self, session, endpoint):
        from keystoneauth1 import adapter
        self.endpoint = endpoint.rstrip('/')
        self._adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE,
            endpoint_override=self.endpoint,
            default_microversion=MICROVERSION)
        self._checked = False

    @classmethod
    def from_client_manager(cls, client_manager):
        return cls(client_manager.session, compute_endpoint(client_manager))

    def get(self, path, **params):
        """The JSON body of GET ``path``; checks Nova's version first."""
        if not self._checked:
            self._check_microversion()
        return self._get(path, params)

    def _get(self, path, params, microversion=MICROVERSION):
        url = self.endpoint + path
        try:
            response = self._adapter.get(
                url, params=params or None, microversion=microversion,
                headers={'Accept': 'application/json'})
        except ks_exc.HttpError as exc:
            if exc.http_status == 406:
                # Refused our microversion though its version document
                # promised it (a proxy in front, say): the same words.
                raise osc_exc.CommandError(too_old_message(
                    self.endpoint,
                    refusal=_nova_detail(exc.response))) from exc
            raise nova_error(exc, path) from exc
        except ks_exc.ConnectionError as exc:
            raise osc_exc.CommandError(
                'Nova could not be reached at %s: %s'
                % (self.endpoint, http.connection_error_message(
                    exc, self.endpoint).split(': ', 1)[-1])) from exc
        return response.json()

    def _check_microversion(self):
        """Refuse a Nova older than ``MICROVERSION``, before any list."""
        document = self._get('/', {}, microversion=None)
        highest = (document.get('version') or {}).get('version') or ''
        if _as_tuple(highest) < _as_tuple(MICROVERSION):
            raise osc_exc.CommandError(too_old_message(
                self.endpoint, highest or '2.0 (no microversions)'))
        self._checked = True

    def pages(self, path, member, marker_key='id', **params):
        """Every item of a paged list, one page of ``PAGE_SIZE`` at a
        time, following ``<member>_links`` by marker."""
        items = []
        params = dict(params, limit=PAGE_SIZE)
        while True:
            body = self.get(path, **params)
            page = body.get(member) or []
            items.extend(page)
            if not page or not _has_next(body.get(member + '_links')):
                return items
            params['marker'] = page[-1][marker_key]

    # --- What the audits read.

    def servers(self):
        """Every live server of every project, with its host and node; refused
        when a cell did not answer, as its servers come back without a host and
        would be taken for gone."""
        servers = self.pages('/servers/detail', 'servers', all_tenants=1)
        check_every_cell_answered(servers)
        return servers

    def server(self, uuid):
        """One server, or None when Nova has none of this UUID."""
        try:
            server = self.get('/servers/%s' % quote(uuid))['server']
        except osc_exc.NotFound:
            return None
        check_every_cell_answered([server])
        return server

    def migrations(self, **filters):
        """Every migration Nova still lists, of any status (``filters``:
        Nova's, instance_uuid say)."""
        return self.pages('/os-migrations', 'migrations', marker_key='uuid',
                          **filters)

    def hypervisors(self):
        """Every compute node; its ``id`` is its provider's UUID."""
        return self.pages('/os-hypervisors/detail', 'hypervisors')

    def flavors(self):
        """Every flavor, public or not, with its extra specs."""
        return self.pages('/flavors/detail', 'flavors', marker_key='id',
                          is_public='None')

    def find_flavor(self, name_or_id):
        """The flavor with this ID, else the one with this name."""
        try:
            return self.get('/flavors/%s' % quote(name_or_id))['flavor']
        except osc_exc.NotFound:
            pass
        named = [flavor for flavor in self.flavors()
                 if flavor['name'] == name_or_id]
        if len(named) == 1:
            return named[0]
        if named:
            raise osc_exc.CommandError(
                "More than one flavor is named '%s'; give its ID."
                % name_or_id)
        raise osc_exc.CommandError(
            "No flavor with name or ID '%s' in Nova." % name_or_id)


def quote(text):
    from urllib import parse
    return parse.quote(text, safe='')


def check_every_cell_answered(servers):
    unknown = sum(1 for server in servers if server.get('status') == 'UNKNOWN')
    if unknown:
        raise osc_exc.CommandError(
            'Nova cannot reach the cell of %d servers (listed UNKNOWN): '
            'judging Placement now would take them for gone. Try again '
            'once every cell answers.' % unknown)


def _has_next(links):
    return any(link.get('rel') == 'next' for link in links or ())


def _as_tuple(microversion):
    try:
        return tuple(int(part) for part in microversion.split('.'))
    except ValueError:
        return (0,)


def too_old_message(endpoint, highest=None, refusal=None):
    said = ('speaks compute API microversions up to %s' % highest
            if highest else 'refused compute API microversion %s (%s)'
            % (MICROVERSION, refusal))
    return ('Nova at %s %s; this command needs %s (Nova 19.0.0, Stein, or '
            'newer).' % (endpoint, said, MICROVERSION))


def compute_endpoint(client_manager):
    """Nova's endpoint: the override if one is set, else the catalogue's.

    A session without a catalogue (``admin_token``, ``none``) would hand
    back Placement's own endpoint for any service type, so there only an
    override will do.
    """
    override = endpoint_override(client_manager)
    if override:
        return override
    session = client_manager.session
    where = 'interface %s' % (client_manager.interface or 'public')
    if client_manager.region_name:
        where += ', region %s' % client_manager.region_name
    endpoint = None
    if has_catalog(session.auth):
        try:
            endpoint = session.get_endpoint(
                service_type=SERVICE_TYPE,
                interface=client_manager.interface or 'public',
                region_name=client_manager.region_name)
        except ks_exc.EndpointNotFound:
            endpoint = None
    if not endpoint:
        raise osc_exc.CommandError(
            'No compute endpoint in the service catalog (%s): this command '
            'reads Nova\'s API. Give its URL in %s (compute_endpoint_override '
            'in clouds.yaml) if the catalog lacks it or there is no catalog.'
            % (where, ENDPOINT_OVERRIDE_ENV))
    return endpoint


def endpoint_override(client_manager):
    import os
    config = client_manager.get_configuration() or {}
    return (config.get(ENDPOINT_OVERRIDE_KEY)
            or os.environ.get(ENDPOINT_OVERRIDE_ENV))


def has_catalog(auth):
    """False for the plugins that serve one endpoint for everything."""
    from keystoneauth1 import noauth
    from keystoneauth1 import token_endpoint
    return auth is not None and not isinstance(
        auth, (noauth.NoAuth, token_endpoint.Token))


def nova_error(exc, path):
    """One readable line for a Nova error response."""
    status = exc.http_status
    detail = _nova_detail(exc.response)
    suffix = http.request_id_suffix(exc)
    if status == 403:
        return osc_exc.CommandError(
            'Nova refused GET %s (HTTP 403): %s. Reading every project\'s '
            'servers, migrations and compute nodes takes an admin of '
            'Nova.%s' % (path, detail.rstrip('.'), suffix))
    if status == 404:
        return osc_exc.NotFound(404, 'Nova: %s%s' % (detail, suffix))
    return osc_exc.CommandError('Nova error on GET %s: %s (HTTP %s)%s'
                                % (path, detail, status, suffix))


def _nova_detail(response):
    """Nova's ``{"<kind>": {"message": ...}}`` body, or the plain text."""
    try:
        body = response.json()
        return next(iter(body.values()))['message']
    except (ValueError, TypeError, KeyError, StopIteration, AttributeError):
        return http.error_detail(response)
