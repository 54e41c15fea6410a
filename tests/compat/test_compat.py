"""skdp.compat is an attribute of skdp and imports no adapter library by itself."""

import subprocess
import sys


def test_compat_is_an_attribute_and_import_skdp_does_not_import_river():
    code = "import sys, skdp; assert skdp.compat.__name__ == 'skdp.compat'; " \
           "assert 'river' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
