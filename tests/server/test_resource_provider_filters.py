# SPDX-License-Identifier: Apache-2.0
"""GET /resource_providers filters (objects/resource_provider.py) against
the candidate search's test of one provider."""


import hypothesis
from hypothesis import strategies as st

from tests.server import candidate_cloud as cloud_db
from tests.unit.server import test_candidate_properties as props


@st.composite
def provider_filters(draw, cloud):
    """GET /resource_providers filters (1.39) with at least one class."""
    version = (1, 39)
    offered = sorted({rc for inv in cloud.inventory.values() for rc in inv})
    classes = draw(st.lists(st.sampled_from(offered), min_size=1,
                            max_size=2, unique=True))
    pairs = [('resources', ','.join('%s:%d' % (rc, draw(props.AMOUNT))
                                    for rc in classes))]
    for _ in range(draw(props.REQUIRED_COUNT)):
        pairs.append(('required', props.trait_value(draw, version)))
    if draw(props.ONE_IN[3]) == 0:
        pairs.append(('member_of', props.member_of_value(draw, version)))
    if draw(props.ONE_IN[5]) == 0:
        pairs.append(('in_tree', draw(st.sampled_from(cloud.providers))))
    return pairs


class TestProviderFiltersMatchCandidates(cloud_db.AppTestCase):
    """GET /resource_providers filters are the candidate search's test of
    one provider: the providers listed are those serving a one-group
    suffixed candidate request with the same filters."""

    @cloud_db.SETTINGS
    @hypothesis.given(props.forests(), st.data())
    def test_same_providers(self, cloud, data):
        pairs = data.draw(provider_filters(cloud))
        cloud_db.write_cloud(self.db, cloud)
        status, listed = cloud_db.list_providers(self.app, pairs)
        self.assertEqual(200, status, listed)
        status, body = cloud_db.get_candidates(
            self.app, (1, 39), [(key + '1', value) for key, value in pairs])
        if status == 400:
            # Candidates reject a trait both required and forbidden
            # (upstream's 400); the listing accepts it and matches nothing.
            self.assertIn('Conflicting required and forbidden', str(body))
            serving = set()
        else:
            self.assertEqual(200, status, body)
            serving = {uuid for request in body['allocation_requests']
                       for uuid in request['allocations']}
        self.assertEqual(serving,
                         {rp['uuid'] for rp in listed['resource_providers']})
