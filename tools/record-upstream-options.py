# SPDX-License-Identifier: Apache-2.0
"""Record every option upstream Placement registers, with its default.

Run with the Python of the venv tools/upstream-venv.sh builds:
    bash tools/upstream-venv.sh
    .venv-upstream/bin/python tools/record-upstream-options.py \
        > tests/server/data/upstream-16.0.0-options.json
tests/server/test_conf.py checks ours against the file.
"""

import json
import sys

from oslo_config import cfg
from placement import conf
from placement import wsgi


def main():
    config = cfg.ConfigOpts()
    conf.register_opts(config)
    # Every upstream command and the WSGI module set these before parsing.
    wsgi._set_middleware_defaults()
    options = []
    for group, opts in [(None, config._opts)] + [
            (name, g._opts) for name, g in config._groups.items()]:
        for name, info in opts.items():
            default = info['opt'].default
            options.append({'group': group or 'DEFAULT', 'name': name,
                            'default': default})
    options.sort(key=lambda o: (o['group'], o['name']))
    json.dump(options, sys.stdout, indent=1, default=str)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
