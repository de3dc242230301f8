import sys

from refsci.cli import main

sys.exit(main())
