# SPDX-License-Identifier: Apache-2.0
"""``allocation candidate explain`` agrees with the server it explains.

Random small clouds (the candidate oracle's strategies) are written to the
test database; for every tree, explain's verdict -- read through the same
public API calls the command makes, judged by ``osc_placement.explain`` --
must be "candidate" exactly when ``GET /allocation_candidates`` for the
same request returns an allocation request taking from that tree. A tree
that is not a candidate must come with at least one failed check.
"""

import urllib.parse

import hypothesis
from hypothesis import strategies as st
import orjson
import webob

from osc_placement import explain
from osc_placement.resources import candidate_explain
from osc_placement import version as microversion
from tests.server import candidate_cloud as http_tests
from tests.unit.server import test_candidate_properties as props


class WsgiPlacement:
    """The client's ``placement`` interface, served by the WSGI app in
    this process: what ``CloudReader`` calls, nothing more."""

    def __init__(self, app, version):
        self.app = app
        self.api_version = '%d.%d' % version

    def request(self, method, url, params=None, version=None):
        query = urllib.parse.urlencode(params or {}, doseq=True)
        req = webob.Request.blank(
            url + ('?' + query if query else ''), method=method,
            headers={'x-auth-token': 'admin',
                     'openstack-api-version': 'placement %s' % (
                         version or self.api_version)})
        resp = req.get_response(self.app)
        if resp.status_int >= 400:
            raise AssertionError('%s %s: %s %s' % (
                method, req.path_qs, resp.status, resp.text))
        return _Response(resp.body)


class _Response:
    def __init__(self, body):
        self._body = body

    def json(self):
        return orjson.loads(self._body)


def answered_roots(cloud, body, version):
    """The trees the answer's allocation requests take from."""
    return {cloud.root(uuid) for request in body['allocation_requests']
            for uuid in props.allocations_of(request, version)}


def verdicts(rows):
    """``{tree: (verdict, failed rows)}`` from explain's rows; the
    catch-all row (no named check failed) is no reason."""
    found = {}
    for row in rows:
        tree, check, result = row[0], row[3], row[6]
        verdict, failed = found.get(tree, (None, 0))
        if check == 'candidate':
            verdict = result == explain.PASS
        elif result == explain.FAIL and check != 'combination':
            failed += 1
        found[tree] = (verdict, failed)
    return found


class TestExplainMatchesTheServer(http_tests.AppTestCase):

    def check_every_tree(self, cloud, version, pairs):
        status, body = http_tests.get_candidates(self.app, version, pairs)
        self.assertEqual(200, status, body)
        answered = answered_roots(cloud, body, version)
        request = explain.parse_query(pairs, version)
        reader = candidate_explain.CloudReader(WsgiPlacement(self.app,
                                                             version))
        roots = sorted({cloud.root(uuid) for uuid in cloud.providers})
        rows = candidate_explain.explain_rows(reader, request, roots,
                                              all_checks=False)
        for root, (verdict, failed) in verdicts(rows).items():
            uuid = root.replace('name-', '')
            self.assertEqual(uuid in answered, verdict,
                             'tree %s; pairs %s' % (uuid, pairs))
            if not verdict:
                self.assertGreater(failed, 0, 'no reason for %s' % uuid)
        self.assertEqual(len(roots), len(verdicts(rows)))

    @http_tests.SETTINGS
    @hypothesis.given(props.clouds(), st.data())
    def test_any_request(self, cloud, data):
        version, pairs, _, _ = http_tests.drawn_example(self.db, cloud, data)
        self.check_every_tree(cloud, version, pairs)

    @http_tests.SETTINGS
    @hypothesis.given(props.clouds(roots_first=True, member_of=True),
                      st.data())
    def test_member_of_requests(self, cloud, data):
        version, pairs, _, _ = http_tests.drawn_example(
            self.db, cloud, data, member_of=True)
        self.check_every_tree(cloud, version, pairs)

    @http_tests.SETTINGS
    @hypothesis.given(http_tests.TRAITS_CLOUDS, st.data())
    def test_required_trait_requests(self, cloud, data):
        version, pairs, _, _ = http_tests.drawn_example(
            self.db, cloud, data, traits=True,
            member_of=data.draw(http_tests.WITH_MEMBER_OF))
        self.check_every_tree(cloud, version, pairs)


class TestFunnelMatchesTheServer(http_tests.AppTestCase):

    def check_funnel(self, cloud, version, pairs, servers_read=None):
        status, body = http_tests.get_candidates(self.app, version, pairs)
        self.assertEqual(200, status, body)
        request = explain.parse_query(pairs, version)
        reader = candidate_explain.CloudReader(WsgiPlacement(self.app,
                                                             version))
        if servers_read is not None:
            # Read which trees sharing providers serve one way or the
            # other, whatever the counts.
            self.patch(candidate_explain, 'SERVERS_FROM_TREES',
                       servers_read)
        funnel, _, steps = candidate_explain.funnel_trees(
            reader, request, lambda: body)
        trees = [step[3] for step in steps]
        for before, after in zip(trees, trees[1:]):
            self.assertLessEqual(after, before, pairs)
        anchors = funnel.anchors_of(body)
        with_own = {cloud.root(uuid) for request_ in body[
            'allocation_requests'] for uuid in _own(funnel, request_,
                                                    version)}
        self.assertLessEqual(with_own, trees[-1], pairs)
        # Where the two may differ (doc/source/user/explain.rst): what
        # only a combination decides, and candidates that take from
        # sharing providers only, listed once under them.
        may_differ = (
            len(request.groups) > 1 or request.same_subtrees
            or not microversion.supports(version, 'nested_candidates')
            or _fractional(cloud) or any(
                not _own(funnel, request_, version)
                for request_ in body['allocation_requests']))
        if not may_differ:
            self.assertEqual(anchors, trees[-1], pairs)

    @http_tests.SETTINGS
    @hypothesis.given(props.clouds(), st.data(), st.sampled_from(
        [None, True, False]))
    def test_any_request(self, cloud, data, servers_read):
        version, pairs, _, _ = http_tests.drawn_example(self.db, cloud, data)
        self.check_funnel(cloud, version, pairs, servers_read)

    @http_tests.SETTINGS
    @hypothesis.given(props.clouds(roots_first=True, member_of=True),
                      st.data())
    def test_member_of_requests(self, cloud, data):
        version, pairs, _, _ = http_tests.drawn_example(
            self.db, cloud, data, member_of=True)
        self.check_funnel(cloud, version, pairs)

    @http_tests.SETTINGS
    @hypothesis.given(http_tests.TRAITS_CLOUDS, st.data())
    def test_required_trait_requests(self, cloud, data):
        version, pairs, _, _ = http_tests.drawn_example(
            self.db, cloud, data, traits=True,
            member_of=data.draw(http_tests.WITH_MEMBER_OF))
        self.check_funnel(cloud, version, pairs)


def _own(funnel, request_, version):
    """The providers of a candidate that are not sharing providers."""
    return [uuid for uuid in props.allocations_of(request_, version)
            if uuid not in funnel.sharing]


def _fractional(cloud):
    """Does some inventory's capacity have a fraction (one amount is
    compared with it unrounded, the summed ones rounded down)?"""
    return any(((total - reserved) * ratio) % 1
               for inventories in cloud.inventory.values()
               for total, reserved, _, _, _, ratio in inventories.values())
