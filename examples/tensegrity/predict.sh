#!/bin/sh
# examples/tensegrity/predict.sh - the SUPERball's 0.1 s predictions at the true parameters on the condim-6 contact
# data (issue 16: torsional and rolling friction 1 in MuJoCo 2.2.2's ground truth), under each contact model:
# physid evaluate --horizon 1 --substeps 100 on one training trajectory (traj00) of the contact set of
# examples/tensegrity/superball_nodyn.xml (generated here if missing, as run.sh's data step does).
#
#   sh examples/tensegrity/predict.sh [BUILD] [MODELS]   (from the repository root; BUILD default build, with physid
#                                                        and gen_superball built; MODELS default "lcp cone ccp penalty")
set -u
B=${1:-build}
MODELS=${2:-lcp cone ccp penalty}
D=$B/tensegrity
if [ ! -f "$D/contact_nodyn/train/10hz/traj00.csv" ]; then
  "$B/gen_superball" examples/tensegrity/superball_nodyn.xml "$D/contact_nodyn" contact || exit 1
fi
for c in $MODELS; do
  echo "== $c"
  "$B/physid" evaluate examples/tensegrity/superball_nodyn.xml "$D/contact_nodyn/train/10hz/traj00.csv" --horizon 1 \
    --substeps 100 --contact "$c" 2>&1 || exit 1
done
