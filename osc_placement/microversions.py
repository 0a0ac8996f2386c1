# SPDX-License-Identifier: Apache-2.0
"""The microversion vocabulary the client and the server share.

Every version-dependent behaviour of Placement is a name in ``FEATURES``,
with the microversion it starts at and what it is. The client's
``osc_placement.version`` and the server's
``osc_placement.server.microversion`` read this table and nothing else
writes a microversion down, so one behaviour has one name on both sides.

This module is data: it imports only the standard library, so the client
reads it without loading anything of the server.
"""

import collections

Feature = collections.namedtuple('Feature', 'since what')

# Oldest first. Every microversion up to MAX_VERSION has at least one
# row, and several behaviours may start at the same one.
FEATURES = {
    'base': Feature('1.0', 'providers, inventories, usages, allocations'),
    'aggregates': Feature('1.1', 'provider aggregates'),
    'resource_classes': Feature('1.2', 'custom resource classes'),
    'member_of': Feature('1.3', 'member_of filter on provider lists'),
    'resources_filter': Feature('1.4', 'resources filter on provider lists'),
    'delete_all_inventories': Feature(
        '1.5', 'delete all inventories of a provider'),
    'traits': Feature('1.6', 'traits'),
    'idempotent_resource_class': Feature(
        '1.7', 'PUT /resource_classes/{name} creates or verifies'),
    'allocation_project_user': Feature(
        '1.8', 'project and user required in allocations'),
    'project_usages': Feature('1.9', 'usages of a project (GET /usages)'),
    'allocation_candidates': Feature('1.10', 'allocation candidates'),
    'provider_allocations_link': Feature(
        '1.11', 'allocations link on providers'),
    'dict_allocations': Feature(
        '1.12', 'allocations as a dict keyed by provider, in bodies and '
        'allocation requests'),
    'consumer_details': Feature(
        '1.12', "a consumer's allocations name its project and user"),
    'multi_consumer_allocations': Feature(
        '1.13', 'allocations of several consumers at once'),
    'nested_providers': Feature(
        '1.14', 'nested providers (parent, root, in_tree)'),
    'cache_headers': Feature(
        '1.15', 'last-modified and cache-control headers'),
    'candidate_limit': Feature('1.16', 'limit on allocation candidates'),
    'candidate_required': Feature(
        '1.17', 'required traits on allocation candidates'),
    'summary_traits': Feature('1.17', 'traits in provider summaries'),
    'provider_required': Feature(
        '1.18', 'required traits on provider lists'),
    'aggregate_generation': Feature(
        '1.19', 'aggregates carry the provider generation'),
    'create_returns_provider': Feature(
        '1.20', 'provider create returns the provider'),
    'candidate_member_of': Feature(
        '1.21', 'member_of on allocation candidates'),
    'forbidden_traits': Feature('1.22', 'forbidden traits'),
    'error_codes': Feature('1.23', 'error codes'),
    'repeated_member_of': Feature('1.24', 'repeated member_of'),
    'granular_groups': Feature('1.25', 'granular request groups'),
    'reserved_equals_total': Feature('1.26', 'reserved may equal total'),
    'summary_all_classes': Feature(
        '1.27', 'all inventories in provider summaries'),
    'consumer_generations': Feature('1.28', 'consumer generations'),
    'nested_candidates': Feature(
        '1.29', 'nested allocation candidates: groups may span a tree'),
    'summary_tree': Feature('1.29', 'parent and root in provider summaries'),
    'reshaper': Feature('1.30', 'reshaper'),
    'candidate_in_tree': Feature(
        '1.31', 'in_tree on allocation candidates'),
    'forbidden_aggregates': Feature('1.32', 'forbidden aggregates'),
    'named_groups': Feature('1.33', 'string request group suffixes'),
    'candidate_mappings': Feature(
        '1.34', 'request group mappings in candidates and allocations'),
    'root_required': Feature(
        '1.35', 'root_required on allocation candidates'),
    'same_subtree': Feature('1.36', 'same_subtree on allocation candidates'),
    'resourceless_groups': Feature(
        '1.36', 'request groups without resources (with same_subtree)'),
    'reparenting': Feature('1.37', 're-parenting and un-parenting providers'),
    'consumer_types': Feature('1.38', 'consumer types'),
    'any_of_traits': Feature('1.39', 'any-of traits (in:) in required'),
}

# The newest microversion both sides speak.
MAX_VERSION = '1.39'
