// Self-contained HTML report and exports.
import SomniCore
