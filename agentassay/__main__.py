import sys

from agentassay.cli import main

sys.exit(main())
