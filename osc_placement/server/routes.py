# SPDX-License-Identifier: Apache-2.0
"""The route table: path template -> {method: [checks..., handler]}.

Adding a route is one line here. Methods are in upstream's declaration
order (the ``Allow`` header of a 405), and a method's checks in the order
upstream's decorators make them, which decides the error of a request
failing two: ``_ACCEPT`` (406 unless JSON is accepted), ``_BODY`` (415
unless the body is JSON), ``Since(rule)`` (below the version where
``rule`` of microversion.RULES starts, 404, or 405 where upstream says).
"""

from osc_placement.server import errors
from osc_placement.server.handlers import aggregate
from osc_placement.server.handlers import allocation
from osc_placement.server.handlers import allocation_candidate
from osc_placement.server.handlers import inventory
from osc_placement.server.handlers import reshaper
from osc_placement.server.handlers import resource_class
from osc_placement.server.handlers import resource_provider
from osc_placement.server.handlers import root
from osc_placement.server.handlers import trait
from osc_placement.server.handlers import usage
from osc_placement.server import http_api
from osc_placement.server import microversion


class Since:
    """A method's version gate (see the module docstring)."""

    __slots__ = ('rule', 'status')

    def __init__(self, rule, status=404):
        if rule not in microversion.SINCE:
            raise ValueError('no rule %r in microversion.RULES' % rule)
        self.rule = rule
        self.status = status

    def __call__(self, req):
        if req.version.supports(self.rule):
            return
        if self.status == 405:
            raise errors.method_not_allowed(
                req.method, req.app.router.allowed(req.path_info))
        raise http_api.not_found()


def chained(steps):
    """One callable for a method's ``[checks..., handler]``."""
    *checks, handler = steps
    if not checks:
        return handler

    def run(req):
        for check in checks:
            check(req)
        return handler(req)
    return run


_ACCEPT = http_api.check_accept_json
_BODY = http_api.check_json_body
_CLASSES = Since('resource_classes')
_TRAITS = Since('traits')
_AGGREGATES = Since('aggregates')
_RP = '/resource_providers/{uuid}'

ROUTES = [
    ('', {'GET': [root.home]}),
    ('/', {'GET': [root.home]}),
    ('/resource_classes', {
        'GET': [_ACCEPT, _CLASSES, resource_class.list_classes],
        'POST': [_CLASSES, _BODY, resource_class.create_class]}),
    ('/resource_classes/{name}', {
        'GET': [_ACCEPT, _CLASSES, resource_class.show_class],
        'PUT': [_CLASSES, resource_class.update_class],
        'DELETE': [_CLASSES, resource_class.delete_class]}),
    ('/resource_providers', {
        'GET': [_ACCEPT, resource_provider.list_providers],
        'POST': [_BODY, resource_provider.create_provider]}),
    (_RP, {
        'GET': [_ACCEPT, resource_provider.show_provider],
        'DELETE': [resource_provider.delete_provider],
        'PUT': [_BODY, resource_provider.update_provider]}),
    (_RP + '/inventories', {
        'GET': [_ACCEPT, inventory.list_inventories],
        'POST': [_BODY, inventory.create_inventory],
        'PUT': [_BODY, inventory.set_inventories],
        'DELETE': [Since('delete_all_inventories', status=405),
                   inventory.delete_inventories]}),
    (_RP + '/inventories/{resource_class}', {
        'GET': [_ACCEPT, inventory.show_inventory],
        'PUT': [_BODY, inventory.update_inventory],
        'DELETE': [inventory.delete_inventory]}),
    (_RP + '/usages', {'GET': [_ACCEPT, usage.provider_usages]}),
    (_RP + '/aggregates', {
        'GET': [_ACCEPT, _AGGREGATES, aggregate.get_aggregates],
        'PUT': [_BODY, _AGGREGATES, aggregate.set_aggregates]}),
    ('/traits', {'GET': [_ACCEPT, _TRAITS, trait.list_traits]}),
    ('/traits/{name}', {
        'GET': [_ACCEPT, _TRAITS, trait.show_trait],
        'PUT': [_TRAITS, trait.put_trait],
        'DELETE': [_TRAITS, trait.delete_trait]}),
    (_RP + '/traits', {
        'GET': [_ACCEPT, _TRAITS, trait.list_provider_traits],
        'PUT': [_TRAITS, _BODY, trait.set_provider_traits],
        'DELETE': [_TRAITS, trait.delete_provider_traits]}),
    ('/usages', {
        'GET': [Since('project_usages'), _ACCEPT, usage.project_usages]}),
    (_RP + '/allocations', {
        'GET': [_ACCEPT, allocation.list_provider_allocations]}),
    ('/allocations', {
        'POST': [Since('multi_consumer_allocations'), _BODY,
                 allocation.manage_allocations]}),
    ('/allocations/{consumer_uuid}', {
        'GET': [_ACCEPT, allocation.get_allocations],
        'PUT': [_BODY, allocation.set_allocations],
        'DELETE': [allocation.delete_allocations]}),
    ('/reshaper', {'POST': [Since('reshaper'), _BODY, reshaper.reshape]}),
    ('/allocation_candidates', {
        'GET': [Since('allocation_candidates'), _ACCEPT,
                allocation_candidate.list_candidates]}),
]
