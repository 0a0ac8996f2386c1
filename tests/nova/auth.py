# SPDX-License-Identifier: Apache-2.0
"""A keystoneauth1 auth plugin for Nova's functional test world.

Nova's ``OSAPIFixture`` stubs Keystone: its request context comes from
the headers ``X-Auth-User`` (``admin`` is an administrator),
``X-Auth-Project-Id`` and ``X-Roles``. Placement's fixture runs with
noauth2, where the token ``admin`` is the administrator. This plugin
sends both, and answers ``get_endpoint`` from a small catalog, so that
a command finds Nova's API the way it does through Keystone's catalog,
not through an override.
"""

from keystoneauth1 import plugin

ADMIN_ROLES = ('reader', 'member', 'admin')
MEMBER_ROLES = ('reader', 'member')


class NovaWorldAuth(plugin.BaseAuthPlugin):
    """Test credentials and a catalog of ``{service_type: url}``."""

    def __init__(self, catalog, user='admin', project_id=None,
                 roles=ADMIN_ROLES, placement_token='admin'):
        super().__init__()
        self.catalog = dict(catalog)
        self.user = user
        self.project_id = project_id
        self.roles = tuple(roles)
        self.placement_token = placement_token

    def get_headers(self, session, **kwargs):
        headers = {
            # Placement (noauth2) reads the token; Nova's stubbed
            # Keystone context reads the other three.
            'X-Auth-Token': self.placement_token,
            'X-Auth-User': self.user,
            'X-Roles': ','.join(self.roles),
        }
        if self.project_id:
            headers['X-Auth-Project-Id'] = self.project_id
        return headers

    def get_endpoint(self, session, service_type=None, interface=None,
                     region_name=None, **kwargs):
        """The catalog's URL for ``service_type``; None when the catalog
        lacks it, as keystoneauth1's identity plugins answer."""
        return self.catalog.get(service_type)

    def get_user_id(self, session, **kwargs):
        return self.user

    def get_project_id(self, session, **kwargs):
        return self.project_id
