# SPDX-License-Identifier: Apache-2.0
"""Upstream Placement 16.0.0 as a process, from the virtualenv of its own
that ``tools/upstream-venv.sh`` builds (upstream is never imported here,
nor a dependency of our package): the yardstick of benchmarks.scale's
``--upstream-venv`` and of the compatibility tests (tests/compat).

    process, url, state = upstream_server.start(
        'postgresql+psycopg://postgres@127.0.0.1/mydb', '.venv-upstream',
        workers=2, threads=4)
"""

import os
import subprocess
import tempfile

import sqlalchemy as sa

from benchmarks import local_server

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_VENV = os.environ.get('OSC_PLACEMENT_UPSTREAM_VENV',
                              os.path.join(TOP, '.venv-upstream'))
# Each side's database driver: upstream's venv has psycopg2 and PyMySQL,
# ours uses psycopg 3 and PyMySQL. SQLite URLs need no driver.
UPSTREAM_DRIVERS = {'postgresql': 'postgresql+psycopg2',
                    'mysql': 'mysql+pymysql'}
OUR_DRIVERS = {'postgresql': 'postgresql+psycopg', 'mysql': 'mysql+pymysql'}


def with_driver(db_url, drivers):
    url = sa.engine.make_url(db_url)
    backend = url.get_backend_name()
    if backend in drivers:
        url = url.set(drivername=drivers[backend])
    return url.render_as_string(hide_password=False)


def upstream_url(db_url):
    return with_driver(db_url, UPSTREAM_DRIVERS)


def our_url(db_url):
    return with_driver(db_url, OUR_DRIVERS)


def write_conf(state, connection, placement=None):
    """placement.conf in the directory ``state``: noauth2, the database
    ``connection`` (an SQLAlchemy URL with the driver of the side that
    reads it, upstream_url or our_url) and the ``[placement]`` options
    ``placement`` ({name: value}); its path."""
    path = os.path.join(state, 'placement.conf')
    with open(path, 'w') as f:
        f.write('[DEFAULT]\ndebug = False\n\n'
                '[api]\nauth_strategy = noauth2\n\n'
                '[placement_database]\nconnection = %s\n' % connection)
        if placement:
            f.write('\n[placement]\n' + ''.join(
                '%s = %s\n' % item for item in sorted(placement.items())))
    return path


def environment(state):
    """The environment upstream's commands run in: placement.wsgi.api and
    placement-manage read $OS_PLACEMENT_CONFIG_DIR/placement.conf."""
    env = dict(os.environ)
    env['OS_PLACEMENT_CONFIG_DIR'] = state
    return env


def start(db_url, venv=DEFAULT_VENV, workers=2, threads=4, seconds=120,
          ready_path='/'):
    """``(process, url, state directory)`` of upstream's API under
    gunicorn (``workers`` processes of ``threads`` threads, as the anchor
    figures were measured) on the database ``db_url``, once
    ``ready_path`` answers. The log is ``server.log`` in the state
    directory."""
    state = tempfile.mkdtemp(prefix='ocp-upstream-')
    write_conf(state, upstream_url(db_url))
    port = local_server.free_port()
    with open(os.path.join(state, 'server.log'), 'w') as log:
        process = subprocess.Popen(
            [os.path.join(os.path.abspath(venv), 'bin', 'gunicorn'),
             '--no-control-socket',
             '-b', '127.0.0.1:%d' % port, '-w', str(workers),
             '-k', 'gthread', '--threads', str(threads),
             '--timeout', '900', 'placement.wsgi.api:application'],
            stdout=log, stderr=subprocess.STDOUT, env=environment(state),
            cwd=state, start_new_session=True)
    url = 'http://127.0.0.1:%d' % port
    local_server.wait_until_ready(process, url, ready_path, seconds)
    return process, url, state
