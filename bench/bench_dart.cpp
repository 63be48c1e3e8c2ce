// bench_dart.cpp - microseconds per World::step of DART 6.12 on the contact scenes of bench_contact.c, in the
// same RESULT format, so scripts/bench_contact.sh puts DART beside physid and MuJoCo:
//   box_rest, box_slide  a 0.2 m cube of 1 kg on a 10 x 10 x 0.1 m ground box, mu 0.8, dt 2 ms (as
//                        tests/data/box.xml), settled 500 steps, box_slide then vx = 1 m/s
//   atlas                Atlas v3 (atlas_v3_no_head.urdf, DART's free root) on ground.urdf, Nimble's set-up:
//                        gravity -y, root rotated -pi/2 about x, dt 1 ms, 10 steps into the fall
// Collision detectors: fcl (DART's default) or bullet. The state after settling (time, positions, velocities)
// is restored before each sample; medians over samples.
//
// usage: bench_dart [--samples N] [--rounds R] [--scene box_rest|box_slide|atlas]... [--collision fcl|bullet]...
// Instructions: valgrind --tool=callgrind --toggle-collect='measured_*' with one scene and one detector.
// Timing is information, never a pass/fail test.
#include <dart/collision/bullet/BulletCollisionDetector.hpp>
#include <dart/constraint/ConstraintSolver.hpp>
#include <dart/dynamics/BoxShape.hpp>
#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/dynamics/WeldJoint.hpp>
#include <dart/simulation/World.hpp>
#include <dart/utils/urdf/DartLoader.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* const kAtlasDir = "/usr/share/doc/dart/data/sdf/atlas/";

// the world's generalized state: positions and velocities of every skeleton, and the time
struct WorldState {
  std::vector<Eigen::VectorXd> q, dq;
  double time = 0;
};

// save every skeleton's positions and velocities
WorldState save(const dart::simulation::WorldPtr& world) {
  WorldState s;
  for (std::size_t i = 0; i < world->getNumSkeletons(); i++) {
    s.q.push_back(world->getSkeleton(i)->getPositions());
    s.dq.push_back(world->getSkeleton(i)->getVelocities());
  }
  s.time = world->getTime();
  return s;
}

// restore a saved state
void restore(const dart::simulation::WorldPtr& world, const WorldState& s) {
  for (std::size_t i = 0; i < world->getNumSkeletons(); i++) {
    world->getSkeleton(i)->setPositions(s.q[i]);
    world->getSkeleton(i)->setVelocities(s.dq[i]);
  }
  world->setTime(s.time);
}

// a box skeleton of size `size` (m) and mass 1 kg, friction mu: welded at height z, or free with its
// centre at height z
dart::dynamics::SkeletonPtr make_box(const std::string& name, const Eigen::Vector3d& size, double z, bool fixed,
                                     double mu) {
  using namespace dart::dynamics;
  SkeletonPtr skel = Skeleton::create(name);
  BodyNode* body = fixed ? skel->createJointAndBodyNodePair<WeldJoint>().second
                         : skel->createJointAndBodyNodePair<FreeJoint>().second;
  auto shape = std::make_shared<BoxShape>(size);
  ShapeNode* node = body->createShapeNodeWith<VisualAspect, CollisionAspect, DynamicsAspect>(shape);
  node->getDynamicsAspect()->setFrictionCoeff(mu);
  node->getDynamicsAspect()->setRestitutionCoeff(0);
  body->setMass(1.0);
  Eigen::Matrix3d inertia = shape->computeInertia(1.0);   // I = m (b^2 + c^2) / 12 about each axis
  body->setMomentOfInertia(inertia(0, 0), inertia(1, 1), inertia(2, 2));
  Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
  pose.translation()[2] = z;
  if (fixed) static_cast<WeldJoint*>(skel->getJoint(0))->setTransformFromParentBodyNode(pose);
  else static_cast<FreeJoint*>(skel->getJoint(0))->setTransform(pose);
  return skel;
}

// the scene's world (not yet settled); nullptr if a file does not load
dart::simulation::WorldPtr make_world(const std::string& scene) {
  auto world = dart::simulation::World::create();
  if (scene == "box_rest" || scene == "box_slide") {
    world->setTimeStep(0.002);
    world->addSkeleton(make_box("ground", Eigen::Vector3d(10, 10, 0.1), -0.05, true, 0.8));
    world->addSkeleton(make_box("box", Eigen::Vector3d(0.2, 0.2, 0.2), 0.1, false, 0.8));
  } else if (scene == "atlas") {
    world->setTimeStep(0.001);
    world->setGravity(Eigen::Vector3d(0, -9.81, 0));
    dart::utils::DartLoader loader;
    auto atlas = loader.parseSkeleton(std::string(kAtlasDir) + "atlas_v3_no_head.urdf");
    auto ground = loader.parseSkeleton(std::string(kAtlasDir) + "ground.urdf");
    if (!atlas || !ground) return nullptr;
    atlas->setPosition(0, -0.5 * M_PI);   // the free root's rotation vector: -pi/2 about x (z up -> y up)
    world->addSkeleton(atlas);
    world->addSkeleton(ground);
  } else {
    return nullptr;
  }
  return world;
}

// steps of settling per scene
int settle_steps(const std::string& scene) { return scene == "atlas" ? 10 : 500; }

}  // namespace

// the measured call (noinline: the callgrind --toggle-collect target)
__attribute__((noinline)) void measured_dart_step(dart::simulation::World* world) { world->step(); }

int main(int argc, char** argv) {
  int samples = 200, rounds = 3;
  std::vector<std::string> scenes, detectors;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--samples" && i + 1 < argc) samples = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--scene" && i + 1 < argc) scenes.push_back(argv[++i]);
    else if (a == "--collision" && i + 1 < argc) detectors.push_back(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_dart [--samples N] [--rounds R] [--scene box_rest|box_slide|atlas]... "
                           "[--collision fcl|bullet]...\n");
      return 2;
    }
  }
  if (scenes.empty()) scenes = {"box_rest", "box_slide", "atlas"};
  if (detectors.empty()) detectors = {"fcl", "bullet"};
  if (samples < 1 || rounds < 1) return 2;
  for (const std::string& scene : scenes) {
    for (const std::string& cd : detectors) {
      auto world = make_world(scene);
      if (!world) {
        std::printf("RESULT\t%s\tdart-%s\tnv=-\tncon=-\tmedian_us=-\tmin_us=-\n", scene.c_str(), cd.c_str());
        continue;
      }
      auto solver = world->getConstraintSolver();
      if (cd == "bullet") solver->setCollisionDetector(dart::collision::BulletCollisionDetector::create());
      else if (cd != "fcl") return std::fprintf(stderr, "bench_dart: unknown detector '%s'\n", cd.c_str()), 2;
      for (int i = 0; i < settle_steps(scene); i++) world->step();
      if (scene == "box_slide") world->getSkeleton(1)->setVelocity(3, 1.0);   // FreeJoint: 3 = linear x
      WorldState s0 = save(world);
      int nv = 0;
      for (std::size_t i = 0; i < world->getNumSkeletons(); i++) nv += (int)world->getSkeleton(i)->getNumDofs();
      std::vector<double> t;
      int ncon = 0;
      for (int k = 0; k < rounds * samples; k++) {
        restore(world, s0);
        auto start = std::chrono::steady_clock::now();
        measured_dart_step(world.get());
        auto stop = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
        ncon = (int)world->getLastCollisionResult().getNumContacts();
      }
      std::sort(t.begin(), t.end());
      std::printf("RESULT\t%s\tdart-%s\tnv=%d\tncon=%d\tmedian_us=%.3f\tmin_us=%.3f\twarnings=0\n", scene.c_str(),
                  cd.c_str(), nv, ncon, t[t.size() / 2], t[0]);
      std::fflush(stdout);
    }
  }
  return 0;
}
