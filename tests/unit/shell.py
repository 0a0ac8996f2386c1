# SPDX-License-Identifier: Apache-2.0
"""Run the real ``openstack`` shell in-process and capture what it prints."""

import io
import sys

import fixtures
from openstackclient import shell as osc_shell
from osc_lib import clientmanager

from tests.unit import fakes

AUTH_ARGS = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
             '--os-endpoint', fakes.ENDPOINT]


class ShellResult:
    def __init__(self, code, stdout, stderr):
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


def run_openstack(test, *argv, env=None, stdout=None):
    """Run ``openstack <AUTH_ARGS> argv``; return code, stdout, stderr.

    ``stdout`` is the stream the shell prints to (default a StringIO,
    whose text is returned).
    """
    requested = (env or {}).get('OS_PLACEMENT_API_VERSION')
    test.useFixture(fixtures.EnvironmentVariable('OS_PLACEMENT_API_VERSION',
                                                 requested))
    test.useFixture(fixtures.EnvironmentVariable('OS_CLOUD'))
    forget_cached_placement_client()
    test.addCleanup(forget_cached_placement_client)
    out, err = stdout or io.StringIO(), io.StringIO()
    test.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
    test.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
    try:
        code = osc_shell.OpenStackShell().run(AUTH_ARGS + list(argv))
    except SystemExit as exit_:
        code = exit_.code
    finally:
        sys.stdout.flush()
    printed = out.getvalue() if isinstance(out, io.StringIO) else None
    return ShellResult(code, printed, err.getvalue())


def forget_cached_placement_client():
    """Drop the client osc-lib caches on the ClientManager class.

    openstackclient installs each plugin's client as a class-level cache,
    so a second shell in the same process would reuse the first one's
    session, endpoint and negotiated version.
    """
    cache = clientmanager.ClientManager.__dict__.get('placement')
    if cache is not None:
        cache._handle = None
