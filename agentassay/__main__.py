import sys

from agentassay.integrations.cli import main

sys.exit(main())
