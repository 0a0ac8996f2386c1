# SPDX-License-Identifier: Apache-2.0
"""Per-test cost of a PlacementFixture: ours against upstream's.

Each side runs in its own process, from its own Python (upstream's
fixture needs openstack-placement, which is never installed beside this
package): a process builds and tears down the fixture ``--runs`` times
with the defaults a Nova test uses (``PlacementFixture()``: in-memory
database, wsgi-intercept) and sends one request through it, so a
fixture that defers work to the first request is charged for it. The
first use in a process (imports aside: schema template, lazy caches) is
reported on its own. Rounds alternate between the sides so a drift of
the shared machine hits both alike::

    python benchmarks/fixture_setup.py \\
        --upstream-python .nova-functional/venv-upstream/bin/python \\
        --rounds 3 --runs 30

``--upstream-python`` is any Python with openstack-placement installed
(tools/nova-functional.sh setup builds one; ../shared/anchor/README.md
describes the anchor venv). One side alone, printing JSON::

    python benchmarks/fixture_setup.py --worker ours --runs 30
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

FIXTURE_MODULES = {
    'ours': 'osc_placement.server.fixture',
    'upstream': 'placement.tests.functional.fixtures.placement',
}


def _one_use(module):
    """Seconds for setUp, one request, cleanUp of a default fixture."""
    import requests
    fixture = module.PlacementFixture()
    started = time.perf_counter()
    fixture.setUp()
    set_up = time.perf_counter()
    resp = requests.get(fixture.endpoint + '/resource_providers',
                        headers={'x-auth-token': fixture.token})
    assert resp.status_code == 200, resp.text
    requested = time.perf_counter()
    fixture.cleanUp()
    done = time.perf_counter()
    return {'setup': set_up - started, 'request': requested - set_up,
            'cleanup': done - requested, 'total': done - started}


def worker(side, runs):
    import importlib
    import logging
    # Upstream logs every request at INFO; neither side should pay for a
    # handler the benchmark does not read.
    logging.disable(logging.INFO)
    started = time.perf_counter()
    module = importlib.import_module(FIXTURE_MODULES[side])
    imported = time.perf_counter() - started
    first = _one_use(module)
    uses = [_one_use(module) for _ in range(runs)]
    return {'side': side, 'import': imported, 'first': first, 'uses': uses}


def _run_worker(python, side, runs):
    out = subprocess.run(
        [python, os.path.abspath(__file__), '--worker', side,
         '--runs', str(runs)],
        check=True, capture_output=True, text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(seconds):
    return round(seconds * 1000, 1)


def _summary(results):
    uses = [use for result in results for use in result['uses']]
    summary = {'uses': len(uses)}
    for key in ('setup', 'request', 'cleanup', 'total'):
        values = sorted(use[key] for use in uses)
        summary[key + '_median_ms'] = _ms(statistics.median(values))
        summary[key + '_p90_ms'] = _ms(values[int(len(values) * 0.9)])
    summary['first_use_total_ms'] = _ms(statistics.median(
        result['first']['total'] for result in results))
    summary['import_ms'] = _ms(statistics.median(
        result['import'] for result in results))
    return summary


def compare(ours_python, upstream_python, rounds, runs):
    results = {'ours': [], 'upstream': []}
    for _ in range(rounds):
        results['ours'].append(_run_worker(ours_python, 'ours', runs))
        results['upstream'].append(
            _run_worker(upstream_python, 'upstream', runs))
    summary = {side: _summary(found) for side, found in results.items()}
    summary['upstream_over_ours_setup'] = round(
        summary['upstream']['setup_median_ms']
        / summary['ours']['setup_median_ms'], 1)
    summary['upstream_over_ours_total'] = round(
        summary['upstream']['total_median_ms']
        / summary['ours']['total_median_ms'], 1)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--worker', choices=sorted(FIXTURE_MODULES),
                        help='measure one side in this process')
    parser.add_argument('--runs', type=int, default=30,
                        help='fixture uses per process (after the first)')
    parser.add_argument('--rounds', type=int, default=3,
                        help='processes per side, alternating')
    parser.add_argument('--ours-python', default=sys.executable)
    parser.add_argument('--upstream-python',
                        help='a Python with openstack-placement installed')
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.runs)))
        return 0
    if not args.upstream_python:
        parser.error('--upstream-python is required to compare')
    print(json.dumps(compare(args.ours_python, args.upstream_python,
                             args.rounds, args.runs), indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
