# SPDX-License-Identifier: Apache-2.0
"""Policy: upstream's rule names, defaults and scopes, via oslo.policy.

Legacy defaults are registered as deprecated rules, so with
``[oslo_policy] enforce_new_defaults = False`` they are OR-ed in.
"""

import time

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from osc_placement.server import errors

ADMIN_OR_SERVICE = 'rule:admin_or_service_api'
PROJECT_SCOPE = ['project']
_REASON = ('Placement API policies moved to admin/service/reader defaults '
           'with scope types (secure RBAC).')
_SINCE = 'WALLABY'


def _legacy(name):
    return oslo_policy.DeprecatedRule(
        name=name, check_str='role:admin', deprecated_reason=_REASON,
        deprecated_since=_SINCE)


BASE_RULES = [
    oslo_policy.RuleDefault('admin_api', 'role:admin',
                            scope_types=PROJECT_SCOPE),
    oslo_policy.RuleDefault('service_api', 'role:service',
                            scope_types=PROJECT_SCOPE,
                            deprecated_rule=_legacy('service_api')),
    oslo_policy.RuleDefault('admin_or_service_api',
                            'role:admin or role:service',
                            scope_types=PROJECT_SCOPE,
                            deprecated_rule=_legacy('admin_or_service_api')),
    oslo_policy.RuleDefault('project_reader_api',
                            'role:reader and project_id:%(project_id)s',
                            deprecated_rule=_legacy('project_reader_api')),
    oslo_policy.RuleDefault(
        'admin_or_project_reader_or_service_api',
        'role:admin or rule:project_reader_api or role:service',
        scope_types=PROJECT_SCOPE,
        deprecated_rule=_legacy('admin_or_project_reader_or_service_api')),
]

# (policy name, check string, [(method, path), ...]) for every API policy.
_RP = '/resource_providers/{uuid}'
API_RULES = [
    ('resource_providers:list', None, [('GET', '/resource_providers')]),
    ('resource_providers:create', None, [('POST', '/resource_providers')]),
    ('resource_providers:show', None, [('GET', _RP)]),
    ('resource_providers:update', None, [('PUT', _RP)]),
    ('resource_providers:delete', None, [('DELETE', _RP)]),
    ('resource_classes:list', None, [('GET', '/resource_classes')]),
    ('resource_classes:create', None, [('POST', '/resource_classes')]),
    ('resource_classes:show', None, [('GET', '/resource_classes/{name}')]),
    ('resource_classes:update', None, [('PUT', '/resource_classes/{name}')]),
    ('resource_classes:delete', None,
     [('DELETE', '/resource_classes/{name}')]),
    ('resource_providers:inventories:list', None,
     [('GET', _RP + '/inventories')]),
    ('resource_providers:inventories:create', None,
     [('POST', _RP + '/inventories')]),
    ('resource_providers:inventories:show', None,
     [('GET', _RP + '/inventories/{resource_class}')]),
    ('resource_providers:inventories:update', None,
     [('PUT', _RP + '/inventories'),
      ('PUT', _RP + '/inventories/{resource_class}')]),
    ('resource_providers:inventories:delete', None,
     [('DELETE', _RP + '/inventories'),
      ('DELETE', _RP + '/inventories/{resource_class}')]),
    ('resource_providers:aggregates:list', None,
     [('GET', _RP + '/aggregates')]),
    ('resource_providers:aggregates:update', None,
     [('PUT', _RP + '/aggregates')]),
    ('resource_providers:usages', None, [('GET', _RP + '/usages')]),
    ('usages', 'rule:admin_or_project_reader_or_service_api',
     [('GET', '/usages')]),
    ('traits:list', None, [('GET', '/traits')]),
    ('traits:show', None, [('GET', '/traits/{name}')]),
    ('traits:update', None, [('PUT', '/traits/{name}')]),
    ('traits:delete', None, [('DELETE', '/traits/{name}')]),
    ('resource_providers:traits:list', None, [('GET', _RP + '/traits')]),
    ('resource_providers:traits:update', None, [('PUT', _RP + '/traits')]),
    ('resource_providers:traits:delete', None,
     [('DELETE', _RP + '/traits')]),
    ('allocations:manage', None, [('POST', '/allocations')]),
    ('allocations:list', None, [('GET', '/allocations/{consumer_uuid}')]),
    ('allocations:update', None, [('PUT', '/allocations/{consumer_uuid}')]),
    ('allocations:delete', None,
     [('DELETE', '/allocations/{consumer_uuid}')]),
    ('resource_providers:allocations:list', None,
     [('GET', _RP + '/allocations')]),
    ('allocation_candidates:list', None,
     [('GET', '/allocation_candidates')]),
    ('reshaper:reshape', 'rule:service_api', [('POST', '/reshaper')]),
]


def list_rules():
    """Every registered rule (also for oslo.policy's sample generator)."""
    rules = list(BASE_RULES)
    for name, check, operations in API_RULES:
        rules.append(oslo_policy.DocumentedRuleDefault(
            name='placement:' + name, check_str=check or ADMIN_OR_SERVICE,
            description='Placement API: %s' % name,
            operations=[{'method': m, 'path': p} for m, p in operations],
            scope_types=PROJECT_SCOPE))
    return rules


# How soon an edited policy file takes effect.
RULES_CHECK_SECONDS = 1.0


class CachingEnforcer:
    """oslo.policy's Enforcer plus a per-process cache of decisions.

    A decision depends only on the rule, the caller's roles, project, user
    and scope, and the target; the cache is dropped whenever oslo.policy
    reloads its rules (a changed policy file), so it cannot go stale.
    """

    MAX_ENTRIES = 4096

    def __init__(self, enforcer):
        self.enforcer = enforcer
        self._rules = None
        self._decisions = {}
        self._checked_at = None

    def allowed(self, name, target, context):
        self._reload_if_due()
        if self._rules is not self.enforcer.rules:
            self._rules, self._decisions = self.enforcer.rules, {}
        key = (name, tuple(sorted(target.items())), context.key())
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._decide(name, target, context)
            if len(self._decisions) >= self.MAX_ENTRIES:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def _reload_if_due(self):
        """Let oslo.policy reload changed policy files, at most once per
        RULES_CHECK_SECONDS: each check looks for the policy file and
        directories on disk (every configuration directory when there is
        none), which cost a twentieth of a claim's server time when done
        on every request."""
        now = time.monotonic()
        if (self._checked_at is None
                or now - self._checked_at >= RULES_CHECK_SECONDS):
            self.enforcer.load_rules()
            self._checked_at = now

    def _decide(self, name, target, context):
        try:
            return bool(self.enforcer.enforce(name, target, context.creds(),
                                              do_raise=False))
        except oslo_policy.InvalidScope:
            return False


def _enforcer(conf):
    enforcer = oslo_policy.Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer


def make_enforcer(conf):
    enforcer = _enforcer(conf)
    enforcer.suppress_deprecation_warnings = True
    enforcer.suppress_default_change_warnings = True
    enforcer.load_rules()
    return CachingEnforcer(enforcer)


def get_enforcer():
    """The ``oslo.policy.enforcer`` entry point (namespace placement),
    which oslopolicy-checker, oslopolicy-policy-upgrade and the sample
    generator load: the rules in code, and the policy file named by the
    placement.conf the WSGI module would read (or in its directory)."""
    from osc_placement.server import conf as conf_mod
    conf = cfg.ConfigOpts()
    conf([], project='placement',
         default_config_files=conf_mod.config_files())
    return _enforcer(conf)


class Context:
    """Who is asking: the identity fields policies look at."""

    __slots__ = ('user_id', 'project_id', 'roles', 'system_scope')

    def __init__(self, user_id, project_id, roles, system_scope=None):
        self.user_id = user_id
        self.project_id = project_id
        self.roles = roles
        self.system_scope = system_scope

    def key(self):
        return (self.user_id, self.project_id, tuple(self.roles),
                self.system_scope)

    def creds(self):
        return {'user_id': self.user_id, 'project_id': self.project_id,
                'roles': self.roles, 'system_scope': self.system_scope}


def authorize(enforcer, context, name, target=None):
    """Raise 403 unless ``context`` may perform policy ``name``."""
    if target is None:
        target = {'project_id': context.project_id,
                  'user_id': context.user_id}
    if not enforcer.allowed(name, target, context):
        # Upstream raises a scope mismatch with the bare rule name as its
        # message and other refusals with a sentence; WebOb's 403
        # template wraps either.
        detail = (name if context.system_scope
                  else 'Policy does not allow %s to be performed.' % name)
        raise _forbidden(detail)


def _forbidden(detail):
    err = errors.Forbidden(detail)
    err.vary = False
    return err
